// Worked examples of the operation-semantics seed for contractions and
// normalisation: Dot, Conv (against the seed's pseudo-code), BatchNorm*.
#include <cmath>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tests/unit/test_util.h"

namespace kiln {
namespace {

using Dims = std::vector<int64_t>;
using kiln::testing::LiteralNear;
using kiln::testing::RunsTo;

TEST(SeedDot, VectorDotVector) {
  Builder b("dot");
  b.Dot(b.Parameter(0, Shape(ElementType::kF32, {3}), "x"),
        b.Parameter(1, Shape(ElementType::kF32, {3}), "y"));
  EXPECT_TRUE(RunsTo(
      b, Literal::Scalar<float>(32),
      std::vector<Literal>{Literal::FromVector<float>({1, 2, 3}), Literal::FromVector<float>({4, 5, 6})}));
}

TEST(SeedDot, MatrixDotVector) {
  Builder b("dot");
  b.Dot(b.ConstantLiteral(Literal::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3})),
        b.ConstantR1<float>({1, 0, -1}));
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({-2, -2})));
}

TEST(SeedDot, MatrixDotMatrix) {
  Builder b("dot");
  const Op lhs = b.Parameter(0, Shape(ElementType::kF32, {2, 3}), "lhs");
  const Op rhs = b.Parameter(1, Shape(ElementType::kF32, {3, 2}), "rhs");
  b.Dot(lhs, rhs);
  const std::vector<Literal> args = {Literal::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3}),
                                     Literal::FromVector<float>({7, 8, 9, 10, 11, 12}, {3, 2})};
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({58, 64, 139, 154}, {2, 2}), args));
}

TEST(SeedDot, IntegerMatrixDotMatrix) {
  Builder b("dot");
  b.Dot(b.ConstantLiteral(Literal::FromVector<int32_t>({1, 2, 3, 4}, {2, 2})),
        b.ConstantLiteral(Literal::FromVector<int32_t>({5, 6, 7, 8}, {2, 2})));
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<int32_t>({19, 22, 43, 50}, {2, 2})));
}

TEST(SeedDot, RefusesContractedSizeMismatch) {
  Builder b("dot");
  b.Dot(b.ConstantLiteral(Literal(Shape(ElementType::kF32, {2, 3}))),
        b.ConstantLiteral(Literal(Shape(ElementType::kF32, {2, 3}))));
  EXPECT_FALSE(b.first_error().ok());
}

// --- Convolution: a direct loop over the seed's pseudo-code, extended with
// dilation as the seed describes it (holes between entries).
struct ConvConfig {
  Dims input;   // b, z, y, x
  Dims kernel;  // oz, iz, ky, kx
  Dims strides;
  std::vector<std::pair<int64_t, int64_t>> padding;
  Dims lhs_dilation = {1, 1};
  Dims rhs_dilation = {1, 1};
};

Literal Iota(const Dims& dims, int mul, int mod, int offset) {
  Literal literal(Shape(ElementType::kF32, dims));
  auto data = literal.data<float>();
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<float>(static_cast<int>(i) * mul % mod - offset);
  return literal;
}

Literal ReferenceConv(const ConvConfig& c, const Literal& input, const Literal& kernel) {
  const int64_t dilated_y = (c.input[2] - 1) * c.lhs_dilation[0] + 1;
  const int64_t dilated_x = (c.input[3] - 1) * c.lhs_dilation[1] + 1;
  const int64_t window_y = (c.kernel[2] - 1) * c.rhs_dilation[0] + 1;
  const int64_t window_x = (c.kernel[3] - 1) * c.rhs_dilation[1] + 1;
  const int64_t out_y = (dilated_y + c.padding[0].first + c.padding[0].second - window_y) / c.strides[0] + 1;
  const int64_t out_x = (dilated_x + c.padding[1].first + c.padding[1].second - window_x) / c.strides[1] + 1;
  Literal output(Shape(ElementType::kF32, {c.input[0], c.kernel[0], out_y, out_x}));
  for (int64_t b = 0; b < c.input[0]; ++b) {
    for (int64_t oz = 0; oz < c.kernel[0]; ++oz) {
      for (int64_t oy = 0; oy < out_y; ++oy) {
        for (int64_t ox = 0; ox < out_x; ++ox) {
          double value = 0;
          for (int64_t iz = 0; iz < c.input[1]; ++iz) {
            for (int64_t ky = 0; ky < c.kernel[2]; ++ky) {
              for (int64_t kx = 0; kx < c.kernel[3]; ++kx) {
                // Position in the dilated base area, then back to a real entry.
                const int64_t py = oy * c.strides[0] + ky * c.rhs_dilation[0] - c.padding[0].first;
                const int64_t px = ox * c.strides[1] + kx * c.rhs_dilation[1] - c.padding[1].first;
                if (py < 0 || px < 0 || py % c.lhs_dilation[0] != 0 || px % c.lhs_dilation[1] != 0) continue;
                const int64_t iy = py / c.lhs_dilation[0];
                const int64_t ix = px / c.lhs_dilation[1];
                if (iy >= c.input[2] || ix >= c.input[3]) continue;
                value += input.Get<float>(Dims{b, iz, iy, ix}) * kernel.Get<float>(Dims{oz, iz, ky, kx});
              }
            }
          }
          output.Set<float>(Dims{b, oz, oy, ox}, static_cast<float>(value));
        }
      }
    }
  }
  return output;
}

void ExpectConvMatchesReference(const ConvConfig& c) {
  const Literal input = Iota(c.input, 7, 11, 5);
  const Literal kernel = Iota(c.kernel, 3, 5, 2);
  Builder b("conv");
  const Op lhs = b.Parameter(0, input.shape(), "input");
  const Op rhs = b.Parameter(1, kernel.shape(), "kernel");
  b.ConvGeneralDilated(lhs, rhs, c.strides, c.padding, c.lhs_dilation, c.rhs_dilation,
                       Builder::DefaultConvDimensionNumbers(2));
  EXPECT_TRUE(RunsTo(b, ReferenceConv(c, input, kernel), std::vector<Literal>{input, kernel}));
}

TEST(SeedConv, GeneralPaddingAndStrides) {
  ExpectConvMatchesReference({{2, 3, 5, 6}, {4, 3, 3, 2}, {2, 1}, {{1, 0}, {2, 1}}});
}

TEST(SeedConv, NoPaddingUnitStride) {
  ExpectConvMatchesReference({{1, 2, 4, 4}, {3, 2, 2, 2}, {1, 1}, {{0, 0}, {0, 0}}});
}

TEST(SeedConv, NegativePaddingRemovesInput) {
  ExpectConvMatchesReference({{1, 2, 6, 5}, {2, 2, 2, 2}, {1, 2}, {{-1, 0}, {0, -1}}});
}

TEST(SeedConv, LhsAndRhsDilation) {
  ConvConfig c{{1, 2, 4, 5}, {2, 2, 2, 2}, {1, 1}, {{1, 1}, {0, 2}}};
  c.lhs_dilation = {2, 1};
  c.rhs_dilation = {1, 2};
  ExpectConvMatchesReference(c);
}

TEST(SeedConv, ValidPaddingShorthand) {
  const ConvConfig c{{1, 2, 5, 5}, {2, 2, 3, 3}, {2, 2}, {{0, 0}, {0, 0}}};
  const Literal input = Iota(c.input, 7, 11, 5);
  const Literal kernel = Iota(c.kernel, 3, 5, 2);
  Builder b("conv");
  b.Conv(b.ConstantLiteral(input), b.ConstantLiteral(kernel), c.strides, Padding::kValid);
  EXPECT_TRUE(RunsTo(b, ReferenceConv(c, input, kernel)));
}

TEST(SeedConv, SamePaddingShorthandKeepsSpatialSizeAtStride1) {
  // SAME pads the input with zeros so the output has the input's spatial shape.
  const ConvConfig c{{1, 2, 5, 4}, {3, 2, 3, 2}, {1, 1}, {{1, 1}, {0, 1}}};
  const Literal input = Iota(c.input, 7, 11, 5);
  const Literal kernel = Iota(c.kernel, 3, 5, 2);
  Builder b("conv");
  const Op conv = b.Conv(b.ConstantLiteral(input), b.ConstantLiteral(kernel), c.strides, Padding::kSame);
  KILN_ASSERT_OK_AND_ASSIGN(Shape shape, b.GetShape(conv));
  EXPECT_EQ(shape, Shape(ElementType::kF32, {1, 3, 5, 4}));
  EXPECT_TRUE(RunsTo(b, ReferenceConv(c, input, kernel)));
}

TEST(SeedConv, RefusesFeatureMismatch) {
  Builder b("conv");
  b.Conv(b.ConstantLiteral(Literal(Shape(ElementType::kF32, {1, 2, 4, 4}))),
         b.ConstantLiteral(Literal(Shape(ElementType::kF32, {1, 3, 2, 2}))), Dims{1, 1}, Padding::kValid);
  EXPECT_FALSE(b.first_error().ok());
}

// --- Batch normalisation, checked against the seed's formulas computed here in
// double precision. The operand is [2, 3, 2, 2] with the feature dimension 1.
constexpr int64_t kFeatureIndex = 1;
const Dims kBatchNormDims = {2, 3, 2, 2};

Literal BatchNormOperand() { return Iota(kBatchNormDims, 5, 13, 6); }

struct Moments {
  std::vector<double> mean, variance;
};

Moments ComputeMoments(const Literal& x) {
  Moments m{std::vector<double>(3, 0.0), std::vector<double>(3, 0.0)};
  std::vector<int64_t> count(3, 0);
  for (int64_t i = 0; i < x.element_count(); ++i) {
    const auto feature = static_cast<size_t>((i / 4) % 3);
    m.mean[feature] += x.GetAsDouble(i);
    ++count[feature];
  }
  for (size_t f = 0; f < 3; ++f) m.mean[f] /= static_cast<double>(count[f]);
  for (int64_t i = 0; i < x.element_count(); ++i) {
    const auto feature = static_cast<size_t>((i / 4) % 3);
    const double d = x.GetAsDouble(i) - m.mean[feature];
    m.variance[feature] += d * d;
  }
  for (size_t f = 0; f < 3; ++f) m.variance[f] /= static_cast<double>(count[f]);
  return m;
}

std::vector<float> ToFloats(const std::vector<double>& values) { return {values.begin(), values.end()}; }

TEST(SeedBatchNormTraining, NormalisesPerFeature) {
  const Literal x = BatchNormOperand();
  const std::vector<float> scale = {1.0f, 2.0f, 0.5f};
  const std::vector<float> offset = {0.0f, -1.0f, 3.0f};
  const float epsilon = 0.001f;
  const Moments m = ComputeMoments(x);
  Literal expected_y(x.shape());
  for (int64_t i = 0; i < x.element_count(); ++i) {
    const auto f = static_cast<size_t>((i / 4) % 3);
    expected_y.data<float>()[static_cast<size_t>(i)] = static_cast<float>(
        scale[f] * (x.GetAsDouble(i) - m.mean[f]) / std::sqrt(m.variance[f] + epsilon) + offset[f]);
  }
  Builder b("batch_norm_training");
  b.BatchNormTraining(b.Parameter(0, x.shape(), "x"), b.ConstantR1<float>(scale), b.ConstantR1<float>(offset),
                      epsilon, kFeatureIndex);
  EXPECT_TRUE(RunsTo(b,
                     Literal::Tuple({expected_y, Literal::FromVector<float>(ToFloats(m.mean)),
                                     Literal::FromVector<float>(ToFloats(m.variance))}),
                     std::vector<Literal>{x}, 1e-5));
}

TEST(SeedBatchNormTraining, LastFeatureIndex) {
  // Feature dimension 1 of a [4, 2] operand: mean/var over dimension 0.
  Builder b("batch_norm_training");
  b.BatchNormTraining(b.ConstantLiteral(Literal::FromVector<float>({1, 10, 2, 20, 3, 30, 4, 40}, {4, 2})),
                      b.ConstantR1<float>({1, 1}), b.ConstantR1<float>({0, 0}), 0.0f, 1);
  const double s = std::sqrt(1.25);
  std::vector<float> y;
  for (double v : {1.0, 2.0, 3.0, 4.0}) {
    y.push_back(static_cast<float>((v - 2.5) / s));
    y.push_back(static_cast<float>((v - 2.5) / s));
  }
  EXPECT_TRUE(
      RunsTo(b,
             Literal::Tuple({Literal::FromVector<float>(y, {4, 2}), Literal::FromVector<float>({2.5f, 25.0f}),
                             Literal::FromVector<float>({1.25f, 125.0f})}),
             {}, 1e-5));
}

TEST(SeedBatchNormTraining, RefusesInvalidFeatureIndex) {
  for (int64_t bad : {4, -5}) {
    Builder b("batch_norm_training");
    b.BatchNormTraining(b.ConstantLiteral(BatchNormOperand()), b.ConstantR1<float>({1, 1, 1}),
                        b.ConstantR1<float>({0, 0, 0}), 0.001f, bad);
    EXPECT_FALSE(b.first_error().ok()) << bad;
  }
  Builder b("batch_norm_training");
  b.BatchNormTraining(b.ConstantLiteral(BatchNormOperand()), b.ConstantR1<float>({1, 1}),
                      b.ConstantR1<float>({0, 0, 0}), 0.001f, kFeatureIndex);
  EXPECT_FALSE(b.first_error().ok()) << "scale has the wrong size";
}

TEST(SeedBatchNormInference, UsesTheGivenMeanAndVariance) {
  const Literal x = BatchNormOperand();
  const std::vector<float> scale = {1.0f, 2.0f, 0.5f};
  const std::vector<float> offset = {0.0f, -1.0f, 3.0f};
  const std::vector<float> mean = {0.5f, -1.0f, 2.0f};
  const std::vector<float> variance = {4.0f, 0.25f, 9.0f};
  const float epsilon = 0.01f;
  Literal expected(x.shape());
  for (int64_t i = 0; i < x.element_count(); ++i) {
    const auto f = static_cast<size_t>((i / 4) % 3);
    expected.data<float>()[static_cast<size_t>(i)] = static_cast<float>(
        scale[f] * (x.GetAsDouble(i) - mean[f]) / std::sqrt(static_cast<double>(variance[f]) + epsilon) +
        offset[f]);
  }
  Builder b("batch_norm_inference");
  b.BatchNormInference(b.Parameter(0, x.shape(), "x"), b.ConstantR1<float>(scale),
                       b.ConstantR1<float>(offset), b.ConstantR1<float>(mean), b.ConstantR1<float>(variance),
                       epsilon, kFeatureIndex);
  EXPECT_TRUE(RunsTo(b, expected, std::vector<Literal>{x}, 1e-5));
}

TEST(SeedBatchNormInference, RefusesInvalidFeatureIndex) {
  Builder b("batch_norm_inference");
  const Op v = b.ConstantR1<float>({1, 1, 1});
  b.BatchNormInference(b.ConstantLiteral(BatchNormOperand()), v, v, v, v, 0.001f, 7);
  EXPECT_FALSE(b.first_error().ok());
}

TEST(SeedBatchNormGrad, MatchesTheGradientOfBatchNormTraining) {
  // The seed's formula text is garbled in translation; these are the
  // gradients of BatchNormTraining's output, as XLA defines batch-norm-grad:
  //   grad_offset  = sum(dy)
  //   grad_scale   = sum(dy * (x - mean)) / sqrt(var + eps)
  //   grad_operand = scale / sqrt(var + eps) *
  //                  (dy - mean(dy) - (x - mean) * mean(dy * (x - mean)) / (var + eps))
  // Result tuple order: (grad_operand, grad_scale, grad_offset).
  const Literal x = BatchNormOperand();
  const Literal dy = Iota(kBatchNormDims, 3, 7, 3);
  const std::vector<float> scale = {1.0f, 2.0f, 0.5f};
  const float epsilon = 0.001f;
  const Moments m = ComputeMoments(x);
  std::vector<double> sum_dy(3, 0.0), sum_dy_centered(3, 0.0);
  const double n = 2 * 2 * 2;
  for (int64_t i = 0; i < x.element_count(); ++i) {
    const auto f = static_cast<size_t>((i / 4) % 3);
    sum_dy[f] += dy.GetAsDouble(i);
    sum_dy_centered[f] += dy.GetAsDouble(i) * (x.GetAsDouble(i) - m.mean[f]);
  }
  Literal grad_operand(x.shape());
  std::vector<double> grad_scale(3);
  for (size_t f = 0; f < 3; ++f) grad_scale[f] = sum_dy_centered[f] / std::sqrt(m.variance[f] + epsilon);
  for (int64_t i = 0; i < x.element_count(); ++i) {
    const auto f = static_cast<size_t>((i / 4) % 3);
    const double var_eps = m.variance[f] + epsilon;
    grad_operand.data<float>()[static_cast<size_t>(i)] =
        static_cast<float>(scale[f] / std::sqrt(var_eps) *
                           (dy.GetAsDouble(i) - sum_dy[f] / n -
                            (x.GetAsDouble(i) - m.mean[f]) * (sum_dy_centered[f] / n) / var_eps));
  }
  Builder b("batch_norm_grad");
  b.BatchNormGrad(b.Parameter(0, x.shape(), "x"), b.ConstantR1<float>(scale),
                  b.ConstantR1<float>(ToFloats(m.mean)), b.ConstantR1<float>(ToFloats(m.variance)),
                  b.Parameter(1, dy.shape(), "dy"), epsilon, kFeatureIndex);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, kiln::testing::BuildAndRun(b, std::vector<Literal>{x, dy}));
  ASSERT_TRUE(result.shape().IsTuple());
  ASSERT_EQ(result.tuple_elements().size(), 3u);
  EXPECT_TRUE(LiteralNear(grad_operand, result.tuple_elements()[0], 1e-4)) << "grad_operand";
  EXPECT_TRUE(LiteralNear(Literal::FromVector<float>(ToFloats(grad_scale)), result.tuple_elements()[1], 1e-4))
      << "grad_scale";
  EXPECT_TRUE(LiteralNear(Literal::FromVector<float>(ToFloats(sum_dy)), result.tuple_elements()[2], 1e-5))
      << "grad_offset";
}

}  // namespace
}  // namespace kiln
