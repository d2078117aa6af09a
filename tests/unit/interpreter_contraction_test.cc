// dot and convolution on the interpreter, checked against naive reference
// loops written independently here, plus the size sanity runs (a 1024^2 dot
// and a 64-channel 3x3 conv on 56x56) that must finish in seconds.
#include <cmath>

#include "tests/unit/test_util.h"

namespace kiln {
namespace {

using testing::BuildAndRun;
using testing::LiteralNear;

// Deterministic small values so sums are exact in float.
Literal Pattern(std::vector<int64_t> dims, int salt = 0) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<float> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    values[static_cast<size_t>(i)] = static_cast<float>((i * 7 + salt) % 11 - 5);
  return Literal::FromVector<float>(values, std::move(dims));
}

struct ConvCase {
  int64_t batch = 1, in_features = 2, height = 5, width = 4, out_features = 2, kernel_h = 3, kernel_w = 2;
  int64_t stride = 1, pad_low = 0, pad_high = 0, lhs_dilation = 1, rhs_dilation = 1;
  int64_t feature_groups = 1, batch_groups = 1;
  bool reversal = false;
};

// Direct definition over NCHW input, OIHW kernel, NCHW output.
Literal ReferenceConv(const ConvCase& c, const Literal& input, const Literal& kernel) {
  const int64_t cig = c.in_features / c.feature_groups;
  const int64_t out_batch = c.batch / c.batch_groups;
  auto out_size = [&](int64_t in, int64_t k) {
    const int64_t dilated_in = (in - 1) * c.lhs_dilation + 1 + c.pad_low + c.pad_high;
    const int64_t dilated_k = (k - 1) * c.rhs_dilation + 1;
    return dilated_in < dilated_k ? 0 : (dilated_in - dilated_k) / c.stride + 1;
  };
  const int64_t oh = out_size(c.height, c.kernel_h), ow = out_size(c.width, c.kernel_w);
  std::vector<float> out(static_cast<size_t>(out_batch * c.out_features * oh * ow), 0.0f);
  auto in_at = [&](int64_t n, int64_t f, int64_t y, int64_t x) {
    return input.data<float>()[static_cast<size_t>(((n * c.in_features + f) * c.height + y) * c.width + x)];
  };
  auto k_at = [&](int64_t o, int64_t i, int64_t y, int64_t x) {
    return kernel.data<float>()[static_cast<size_t>(((o * cig + i) * c.kernel_h + y) * c.kernel_w + x)];
  };
  for (int64_t n = 0; n < out_batch; ++n)
    for (int64_t o = 0; o < c.out_features; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          const int64_t group = c.feature_groups > 1 ? o / (c.out_features / c.feature_groups) : 0;
          const int64_t batch_group = c.batch_groups > 1 ? o / (c.out_features / c.batch_groups) : 0;
          float sum = 0;
          for (int64_t i = 0; i < cig; ++i)
            for (int64_t ky = 0; ky < c.kernel_h; ++ky)
              for (int64_t kx = 0; kx < c.kernel_w; ++kx) {
                const int64_t py = y * c.stride + ky * c.rhs_dilation - c.pad_low;
                const int64_t px = x * c.stride + kx * c.rhs_dilation - c.pad_low;
                if (py < 0 || px < 0 || py % c.lhs_dilation || px % c.lhs_dilation) continue;
                const int64_t iy = py / c.lhs_dilation, ix = px / c.lhs_dilation;
                if (iy >= c.height || ix >= c.width) continue;
                const int64_t ty = c.reversal ? c.kernel_h - 1 - ky : ky;
                const int64_t tx = c.reversal ? c.kernel_w - 1 - kx : kx;
                sum += in_at(batch_group * out_batch + n, group * cig + i, iy, ix) * k_at(o, i, ty, tx);
              }
          out[static_cast<size_t>(((n * c.out_features + o) * oh + y) * ow + x)] = sum;
        }
  return Literal::FromVector<float>(out, {out_batch, c.out_features, oh, ow});
}

StatusOr<Literal> RunConv(const ConvCase& c, const Literal& input, const Literal& kernel) {
  Builder builder("conv");
  Op lhs = builder.ConstantLiteral(input);
  Op rhs = builder.ConstantLiteral(kernel);
  const int64_t strides[] = {c.stride, c.stride};
  const std::pair<int64_t, int64_t> padding[] = {{c.pad_low, c.pad_high}, {c.pad_low, c.pad_high}};
  const int64_t lhs_dilation[] = {c.lhs_dilation, c.lhs_dilation};
  const int64_t rhs_dilation[] = {c.rhs_dilation, c.rhs_dilation};
  Op conv =
      builder.ConvGeneralDilated(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation,
                                 Builder::DefaultConvDimensionNumbers(2), c.feature_groups, c.batch_groups);
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, builder.Build(conv));
  if (c.reversal) {
    for (const auto& instruction : module->entry()->instructions()) {
      if (instruction->opcode == Opcode::kConvolution) {
        for (WindowDimension& w : instruction->attrs.window->dimensions) w.window_reversal = true;
      }
    }
  }
  return testing::Run(*module);
}

void ExpectConvMatchesReference(const ConvCase& c) {
  const Literal input = Pattern({c.batch, c.in_features, c.height, c.width}, 1);
  const Literal kernel =
      Pattern({c.out_features, c.in_features / c.feature_groups, c.kernel_h, c.kernel_w}, 3);
  StatusOr<Literal> result = RunConv(c, input, kernel);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(LiteralNear(ReferenceConv(c, input, kernel), *result));
}

TEST(InterpreterContractionTest, DotMatrixVectorAndBatched) {
  Builder builder("dot");
  Op a = builder.ConstantLiteral(Literal::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3}));
  Op v = builder.ConstantR1<float>({1, 0, -1});
  Op batched_lhs = builder.ConstantLiteral(Literal::FromVector<int32_t>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2}));
  DotDimensionNumbers numbers;
  numbers.lhs_batch_dimensions = {0};
  numbers.rhs_batch_dimensions = {0};
  numbers.lhs_contracting_dimensions = {2};
  numbers.rhs_contracting_dimensions = {1};
  const Op outputs[] = {builder.Dot(a, v), builder.DotGeneral(batched_lhs, batched_lhs, numbers)};
  builder.Tuple(outputs);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result.tuple_elements()[0], Literal::FromVector<float>({-2, -2}));
  EXPECT_EQ(result.tuple_elements()[1],
            Literal::FromVector<int32_t>({7, 10, 15, 22, 67, 78, 91, 106}, {2, 2, 2}));
}

TEST(InterpreterContractionTest, DotContractingTheFirstDimension) {
  // lhs^T * rhs: contract dimension 0 of both.
  Builder builder("dot_transposed");
  Op lhs = builder.ConstantLiteral(Literal::FromVector<double>({1, 2, 3, 4, 5, 6}, {3, 2}));
  Op rhs = builder.ConstantLiteral(Literal::FromVector<double>({1, 0, 0, 1, 1, 1}, {3, 2}));
  DotDimensionNumbers numbers;
  numbers.lhs_contracting_dimensions = {0};
  numbers.rhs_contracting_dimensions = {0};
  builder.DotGeneral(lhs, rhs, numbers);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result, Literal::FromVector<double>({6, 8, 8, 10}, {2, 2}));
}

TEST(InterpreterContractionTest, DotInHalfPrecisionAccumulatesInFloat) {
  // Summing 3000 ones in f16 would stall at 2048 (2048 + 1 rounds back to
  // 2048); accumulating in float gives 3000, which f16 holds exactly.
  std::vector<half> ones(3000, half(1.0f));
  Builder builder("dot_half");
  Op v = builder.ConstantR1<half>(ones);
  builder.Dot(v, v);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(static_cast<float>(result.data<half>()[0]), 3000.0f);
}

TEST(InterpreterContractionTest, ConvolutionBasic) { ExpectConvMatchesReference(ConvCase{}); }

TEST(InterpreterContractionTest, ConvolutionStridedPadded) {
  ConvCase c;
  c.stride = 2;
  c.pad_low = 1;
  c.pad_high = 2;
  ExpectConvMatchesReference(c);
}

TEST(InterpreterContractionTest, ConvolutionLhsAndRhsDilation) {
  ConvCase c;
  c.lhs_dilation = 2;
  c.rhs_dilation = 2;
  c.pad_low = 1;
  c.pad_high = 1;
  ExpectConvMatchesReference(c);
}

TEST(InterpreterContractionTest, ConvolutionFeatureGroups) {
  ConvCase c;
  c.in_features = 4;
  c.out_features = 6;
  c.feature_groups = 2;
  ExpectConvMatchesReference(c);
}

TEST(InterpreterContractionTest, ConvolutionDepthwise) {
  ConvCase c;
  c.in_features = 3;
  c.out_features = 3;
  c.feature_groups = 3;
  ExpectConvMatchesReference(c);
}

TEST(InterpreterContractionTest, ConvolutionBatchGroups) {
  ConvCase c;
  c.batch = 4;
  c.out_features = 4;
  c.batch_groups = 2;
  ExpectConvMatchesReference(c);
}

TEST(InterpreterContractionTest, ConvolutionWindowReversal) {
  ConvCase c;
  c.reversal = true;
  c.pad_low = 1;
  c.pad_high = 1;
  ExpectConvMatchesReference(c);
}

TEST(InterpreterContractionTest, ConvolutionWithNhwcDimensionNumbers) {
  // The same convolution in NHWC/HWIO/NHWC must equal the NCHW one transposed.
  ConvCase c;
  const Literal input = Pattern({1, 2, 5, 4}, 1);
  const Literal kernel = Pattern({2, 2, 3, 2}, 3);
  const Literal expected = ReferenceConv(c, input, kernel);
  Builder builder("conv_nhwc");
  const int64_t to_nhwc[] = {0, 2, 3, 1}, to_hwio[] = {2, 3, 1, 0};
  Op lhs = builder.Transpose(builder.ConstantLiteral(input), to_nhwc);
  Op rhs = builder.Transpose(builder.ConstantLiteral(kernel), to_hwio);
  ConvolutionDimensionNumbers numbers;
  numbers.input_batch_dimension = 0;
  numbers.input_feature_dimension = 3;
  numbers.input_spatial_dimensions = {1, 2};
  numbers.kernel_input_feature_dimension = 2;
  numbers.kernel_output_feature_dimension = 3;
  numbers.kernel_spatial_dimensions = {0, 1};
  numbers.output_batch_dimension = 0;
  numbers.output_feature_dimension = 3;
  numbers.output_spatial_dimensions = {1, 2};
  const int64_t strides[] = {1, 1};
  const std::pair<int64_t, int64_t> padding[] = {{0, 0}, {0, 0}};
  Op conv = builder.ConvGeneral(lhs, rhs, strides, padding, numbers);
  const int64_t to_nchw[] = {0, 3, 1, 2};
  builder.Transpose(conv, to_nchw);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_TRUE(LiteralNear(expected, result));
}

TEST(InterpreterContractionTest, LargeDotRunsAndIsCorrect) {
  constexpr int64_t kSize = 1024;
  std::vector<float> a(kSize * kSize), b(kSize * kSize);
  for (int64_t i = 0; i < kSize * kSize; ++i) {
    a[static_cast<size_t>(i)] = static_cast<float>(i % 13) * 0.25f;
    b[static_cast<size_t>(i)] = static_cast<float>(i % 7) - 3.0f;
  }
  Builder builder("big_dot");
  Op lhs = builder.Parameter(0, Shape(ElementType::kF32, {kSize, kSize}), "a");
  Op rhs = builder.Parameter(1, Shape(ElementType::kF32, {kSize, kSize}), "b");
  builder.Dot(lhs, rhs);
  const Literal arguments[] = {Literal::FromVector<float>(a, {kSize, kSize}),
                               Literal::FromVector<float>(b, {kSize, kSize})};
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder, arguments));
  for (int64_t i : {int64_t{0}, int64_t{511}, kSize - 1}) {
    for (int64_t j : {int64_t{0}, int64_t{300}, kSize - 1}) {
      double expected = 0;
      for (int64_t k = 0; k < kSize; ++k) {
        expected += static_cast<double>(a[static_cast<size_t>(i * kSize + k)]) *
                    b[static_cast<size_t>(k * kSize + j)];
      }
      EXPECT_NEAR(result.data<float>()[static_cast<size_t>(i * kSize + j)], expected,
                  1e-3 * (1 + std::fabs(expected)));
    }
  }
}

TEST(InterpreterContractionTest, LargeConvolutionRunsAndIsCorrect) {
  ConvCase c;
  c.in_features = 64;
  c.out_features = 64;
  c.height = 56;
  c.width = 56;
  c.kernel_h = 3;
  c.kernel_w = 3;
  c.pad_low = 1;
  c.pad_high = 1;
  const Literal input = Pattern({1, 64, 56, 56}, 1);
  const Literal kernel = Pattern({64, 64, 3, 3}, 3);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, RunConv(c, input, kernel));
  ASSERT_EQ(result.shape().dimensions(), (std::vector<int64_t>{1, 64, 56, 56}));
  // Spot-check corners and the middle against the direct definition.
  for (int64_t o : {int64_t{0}, int64_t{63}}) {
    for (int64_t y : {int64_t{0}, int64_t{28}, int64_t{55}}) {
      for (int64_t x : {int64_t{0}, int64_t{55}}) {
        double expected = 0;
        for (int64_t i = 0; i < 64; ++i)
          for (int64_t ky = 0; ky < 3; ++ky)
            for (int64_t kx = 0; kx < 3; ++kx) {
              const int64_t iy = y + ky - 1, ix = x + kx - 1;
              if (iy < 0 || ix < 0 || iy >= 56 || ix >= 56) continue;
              expected += input.data<float>()[static_cast<size_t>((i * 56 + iy) * 56 + ix)] *
                          kernel.data<float>()[static_cast<size_t>(((o * 64 + i) * 3 + ky) * 3 + kx)];
            }
        EXPECT_EQ(result.data<float>()[static_cast<size_t>((o * 56 + y) * 56 + x)],
                  static_cast<float>(expected));
      }
    }
  }
}

}  // namespace
}  // namespace kiln
