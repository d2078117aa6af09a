// The convolution thunk against the interpreter: layouts, padding, strides,
// dilations, feature and batch groups, window reversal.
#include "backends/cpu/convolution_thunk.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

using testing::ExpectMatchesInterpreter;

TEST(RuntimeConvolutionTest, ChannelsLastSamePadding) {
  ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  x = f32[2,6,6,4] parameter(0)
  w = f32[3,3,4,5] parameter(1)
  ROOT c = f32[2,6,6,5] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})");
}

TEST(RuntimeConvolutionTest, ChannelsFirstWithStridesAndAsymmetricPadding) {
  ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  x = f32[2,3,9,8] parameter(0)
  w = f32[4,3,3,2] parameter(1)
  ROOT c = f32[2,4,4,5] convolution(x, w), window={size=3x2 stride=2x2 pad=0_1x1_1}, dim_labels=bf01_oi01->bf01
})");
}

TEST(RuntimeConvolutionTest, LhsAndRhsDilation) {
  ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  x = f32[1,5,5,2] parameter(0)
  w = f32[2,2,2,3] parameter(1)
  ROOT c = f32[1,10,8,3] convolution(x, w), window={size=2x2 pad=1_1x1_0 lhs_dilate=2x2 rhs_dilate=1x2}, dim_labels=b01f_01io->b01f
})");
}

TEST(RuntimeConvolutionTest, FeatureGroups) {
  ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  x = f32[2,7,7,6] parameter(0)
  w = f32[3,3,2,9] parameter(1)
  ROOT c = f32[2,5,5,9] convolution(x, w), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=3
})");
}

TEST(RuntimeConvolutionTest, DepthwiseOneDimensional) {
  ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  x = f32[3,10,4] parameter(0)
  w = f32[3,1,4] parameter(1)
  ROOT c = f32[3,10,4] convolution(x, w), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f, feature_group_count=4
})");
}

TEST(RuntimeConvolutionTest, BatchGroupsAsInAWeightGradient) {
  ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  x = f32[4,5,5,2] parameter(0)
  w = f32[4,3,3,2] parameter(1)
  ROOT c = f32[3,3,1,2] convolution(x, w), window={size=3x3}, dim_labels=f01b_i01o->01bf, batch_group_count=2
})");
}

TEST(RuntimeConvolutionTest, WindowReversalAndKernelOutputFirst) {
  ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  x = f32[2,6,6,3] parameter(0)
  w = f32[3,3,4,3] parameter(1)
  ROOT c = f32[2,6,6,4] convolution(x, w), window={size=3x3 pad=1_1x1_1 rhs_reversal=1x1}, dim_labels=b01f_01oi->b01f
})");
}

TEST(RuntimeConvolutionTest, DoubleAndThreeSpatialDimensions) {
  ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  x = f64[1,4,4,4,2] parameter(0)
  w = f64[2,2,2,2,3] parameter(1)
  ROOT c = f64[1,3,3,3,3] convolution(x, w), window={size=2x2x2}, dim_labels=b012f_012io->b012f
})",
                           1e-9);
}

TEST(RuntimeConvolutionTest, ManyRowsSpanSeveralBlocks) {
  ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  x = f32[2,40,40,8] parameter(0)
  w = f32[3,3,8,16] parameter(1)
  ROOT c = f32[2,40,40,16] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})",
                           1e-3);
}

TEST(RuntimeConvolutionTest, PlanWritesChannelsLastOutputDirectly) {
  std::unique_ptr<Module> module = testing::ParseOrDie(R"(HloModule m
ENTRY e {
  x = f32[2,6,6,4] parameter(0)
  w = f32[3,3,4,5] parameter(1)
  a = f32[2,6,6,5] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  y = f32[2,4,6,6] parameter(2)
  v = f32[5,4,3,3] parameter(3)
  b = f32[2,5,6,6] convolution(y, v), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
  ROOT t = (f32[2,6,6,5], f32[2,5,6,6]) tuple(a, b)
})");
  ASSERT_NE(module, nullptr);
  const Instruction* root = module->entry()->root();
  std::optional<ConvolutionGeometry> channels_last = PlanConvolution(*root->operand(0));
  std::optional<ConvolutionGeometry> channels_first = PlanConvolution(*root->operand(1));
  ASSERT_TRUE(channels_last.has_value());
  ASSERT_TRUE(channels_first.has_value());
  EXPECT_TRUE(channels_last->direct_output);
  EXPECT_FALSE(channels_first->direct_output);
  EXPECT_EQ(channels_last->patch_columns, 36);
  EXPECT_EQ(channels_last->rows, 72);
}

TEST(RuntimeConvolutionTest, HalfPrecisionTakesTheGenericPath) {
  ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  x = f16[1,4,4,2] parameter(0)
  w = f16[2,2,2,2] parameter(1)
  ROOT c = f16[1,3,3,2] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f
})",
                           1e-2);
}

}  // namespace
}  // namespace kiln::cpu
