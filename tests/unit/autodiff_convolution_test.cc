// Reverse mode over convolution: both operands' gradients against f64
// central differences for random 1-d and 2-d convolutions (random dimension
// numbers, feature and batch groups, strides, padding incl. negative, base
// and window dilation), on the interpreter and cpu; and grad of grad.
#include <algorithm>
#include <random>
#include <string>
#include <utility>

#include "tests/unit/autodiff_gradient_check.h"

namespace kiln {
namespace {

using testing::ExpectGradientsMatchFiniteDifferences;
using testing::RandomF64;

struct RandomConvolution {
  Shape input, kernel;
  std::vector<int64_t> strides, lhs_dilation, rhs_dilation;
  std::vector<std::pair<int64_t, int64_t>> padding;
  ConvolutionDimensionNumbers numbers;
  int64_t feature_groups = 1, batch_groups = 1;
  std::string description;
};

// A random permutation of 0..rank-1.
std::vector<int64_t> Permutation(int64_t rank, std::mt19937& random) {
  std::vector<int64_t> order;
  for (int64_t d = 0; d < rank; ++d) order.push_back(d);
  std::shuffle(order.begin(), order.end(), random);
  return order;
}

// `groups`: 0 none, 1 feature groups, 2 batch groups.
RandomConvolution MakeConvolution(int64_t spatial, int groups, std::mt19937& random) {
  auto pick = [&](int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(random);
  };
  RandomConvolution c;
  const int64_t rank = spatial + 2;
  const std::vector<int64_t> in = Permutation(rank, random);
  const std::vector<int64_t> ker = Permutation(rank, random);
  const std::vector<int64_t> out = Permutation(rank, random);
  ConvolutionDimensionNumbers& n = c.numbers;
  n.input_batch_dimension = in[0];
  n.input_feature_dimension = in[1];
  n.kernel_output_feature_dimension = ker[0];
  n.kernel_input_feature_dimension = ker[1];
  n.output_batch_dimension = out[0];
  n.output_feature_dimension = out[1];
  for (int64_t i = 0; i < spatial; ++i) {
    n.input_spatial_dimensions.push_back(in[static_cast<size_t>(2 + i)]);
    n.kernel_spatial_dimensions.push_back(ker[static_cast<size_t>(2 + i)]);
    n.output_spatial_dimensions.push_back(out[static_cast<size_t>(2 + i)]);
  }
  if (groups == 1) c.feature_groups = pick(2, 3);
  if (groups == 2) c.batch_groups = 2;
  const int64_t kernel_in = pick(1, 2);
  const int64_t batch = c.batch_groups * pick(1, 2);
  const int64_t kernel_out = c.feature_groups * c.batch_groups * pick(1, 2);
  std::vector<int64_t> input_dims(static_cast<size_t>(rank));
  std::vector<int64_t> kernel_dims(static_cast<size_t>(rank));
  input_dims[static_cast<size_t>(n.input_batch_dimension)] = batch;
  input_dims[static_cast<size_t>(n.input_feature_dimension)] = kernel_in * c.feature_groups;
  kernel_dims[static_cast<size_t>(n.kernel_input_feature_dimension)] = kernel_in;
  kernel_dims[static_cast<size_t>(n.kernel_output_feature_dimension)] = kernel_out;
  for (int64_t i = 0; i < spatial; ++i) {
    // Redraw until the window fits the padded, dilated input at least once.
    for (;;) {
      const int64_t size = pick(spatial == 1 ? 3 : 2, spatial == 1 ? 7 : 4);
      const int64_t window = pick(1, 3);
      const int64_t stride = pick(1, 2);
      const int64_t lhs_dilation = pick(1, 2);
      const int64_t rhs_dilation = pick(1, 2);
      const int64_t low = pick(-1, 2);
      const int64_t high = pick(-1, 2);
      const int64_t padded = (size - 1) * lhs_dilation + 1 + low + high;
      if (padded < (window - 1) * rhs_dilation + 1) continue;
      input_dims[static_cast<size_t>(n.input_spatial_dimensions[static_cast<size_t>(i)])] = size;
      kernel_dims[static_cast<size_t>(n.kernel_spatial_dimensions[static_cast<size_t>(i)])] = window;
      c.strides.push_back(stride);
      c.lhs_dilation.push_back(lhs_dilation);
      c.rhs_dilation.push_back(rhs_dilation);
      c.padding.push_back({low, high});
      c.description += " size " + std::to_string(size) + " window " + std::to_string(window) + " stride " +
                       std::to_string(stride) + " lhs_dilation " + std::to_string(lhs_dilation) +
                       " rhs_dilation " + std::to_string(rhs_dilation) + " padding " + std::to_string(low) +
                       "/" + std::to_string(high) + ";";
      break;
    }
  }
  c.input = Shape(ElementType::kF64, input_dims);
  c.kernel = Shape(ElementType::kF64, kernel_dims);
  return c;
}

// sum(tanh(conv(x, w))) when `loss`, else conv(x, w).
std::unique_ptr<Module> BuildConvolution(const RandomConvolution& c, bool loss) {
  Builder builder("conv");
  Op x = builder.Parameter(0, c.input, "x");
  Op w = builder.Parameter(1, c.kernel, "w");
  Op y = builder.ConvGeneralDilated(x, w, c.strides, c.padding, c.lhs_dilation, c.rhs_dilation, c.numbers,
                                    c.feature_groups, c.batch_groups);
  if (loss) {
    auto add = testing::ScalarBinaryComputation(Opcode::kAdd, ElementType::kF64, "add");
    EXPECT_TRUE(add.ok());
    std::vector<int64_t> all;
    for (int64_t d = 0; d < c.input.rank(); ++d) all.push_back(d);
    builder.Reduce(builder.Tanh(y), builder.ConstantR0<double>(0.0), **add, all);
  }
  auto module = builder.Build();
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

void CheckRandomConvolutions(int64_t spatial, int groups, uint32_t seed, int trials) {
  std::mt19937 random(seed);
  for (int trial = 0; trial < trials; ++trial) {
    const RandomConvolution c = MakeConvolution(spatial, groups, random);
    SCOPED_TRACE(c.input.ToString() + " * " + c.kernel.ToString() + " groups " +
                 std::to_string(c.feature_groups) + "/" + std::to_string(c.batch_groups) + c.description);
    auto module = BuildConvolution(c, /*loss=*/false);
    ASSERT_NE(module, nullptr);
    ExpectGradientsMatchFiniteDifferences(*module, {0, 1},
                                          {RandomF64(c.input, random), RandomF64(c.kernel, random)},
                                          seed + static_cast<uint32_t>(trial));
  }
}

TEST(AutodiffConvolutionTest, OneSpatialDimension) { CheckRandomConvolutions(1, 0, 1, 6); }
TEST(AutodiffConvolutionTest, OneSpatialDimensionFeatureGroups) { CheckRandomConvolutions(1, 1, 2, 4); }
TEST(AutodiffConvolutionTest, OneSpatialDimensionBatchGroups) { CheckRandomConvolutions(1, 2, 3, 4); }
TEST(AutodiffConvolutionTest, TwoSpatialDimensions) { CheckRandomConvolutions(2, 0, 4, 4); }
TEST(AutodiffConvolutionTest, TwoSpatialDimensionsFeatureGroups) { CheckRandomConvolutions(2, 1, 5, 3); }
TEST(AutodiffConvolutionTest, TwoSpatialDimensionsBatchGroups) { CheckRandomConvolutions(2, 2, 6, 3); }

// The gradient module differentiated again (second derivatives through the
// backward convolutions), plain and grouped.
TEST(AutodiffConvolutionTest, GradOfGrad) {
  std::mt19937 random(7);
  for (int groups : {0, 1, 2}) {
    const RandomConvolution c = MakeConvolution(groups == 0 ? 2 : 1, groups, random);
    SCOPED_TRACE(c.input.ToString() + " * " + c.kernel.ToString() + c.description);
    auto module = BuildConvolution(c, /*loss=*/true);
    ASSERT_NE(module, nullptr);
    KILN_ASSERT_OK_AND_ASSIGN(auto first, autodiff::BuildVjp(*module, std::vector<int64_t>{0, 1}));
    ExpectGradientsMatchFiniteDifferences(
        *first, {0, 1}, {RandomF64(c.input, random, -1, 1), RandomF64(c.kernel, random, -1, 1)}, 8);
  }
}

}  // namespace
}  // namespace kiln
