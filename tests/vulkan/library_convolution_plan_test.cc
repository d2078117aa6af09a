// Which convolutions run the library convolution (library_convolution.h)
// and with what tiles and push constants. No device needed.
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/vulkan/library_convolution.h"
#include "backends/vulkan/library_kernels.h"
#include "core/hlo_parser.h"

namespace kiln::vulkan {
namespace {

std::unique_ptr<Module> ConvolutionModule(const std::string& lhs, const std::string& rhs,
                                          const std::string& out, const std::string& attributes) {
  StatusOr<std::unique_ptr<Module>> module =
      ParseHloModule("HloModule c\nENTRY main {\n  a = " + lhs + " parameter(0)\n  b = " + rhs +
                     " parameter(1)\n  ROOT c = " + out + " convolution(a, b), " + attributes + "\n}\n");
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

std::optional<ConvolutionPlan> Plan(const Module& module,
                                    const ShaderFeatures& features = AllShaderFeatures()) {
  return PlanKernelConvolution(*module.entry(), features);
}

TEST(VulkanConvolutionPlan, NhwcIsAnImplicitGemmOfTheWindowAndFeatures) {
  std::unique_ptr<Module> module =
      ConvolutionModule("f32[8,56,56,64]", "f32[3,3,64,64]", "f32[8,56,56,64]",
                        "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f");
  ASSERT_NE(module, nullptr);
  const std::optional<ConvolutionPlan> plan = Plan(*module);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->shader, LibraryShader::kConvolutionF32);
  EXPECT_EQ(plan->tiles.specialization(), (std::vector<uint32_t>{64, 64, 8, 4, 4}));
  EXPECT_EQ(plan->tiles.workgroup_size(), 256u);
  const ConvolutionShape& s = plan->shape;
  EXPECT_EQ(s.rows(), 8 * 56 * 56);
  EXPECT_EQ(s.depth(), 3 * 3 * 64);
  EXPECT_EQ(s.out_features, 64u);
  EXPECT_EQ(s.groups, 1u);
  // Two spatial dimensions take the last two of the shader's three slots.
  EXPECT_EQ(s.pad_low[0], 0);
  EXPECT_EQ(s.pad_low[1], 1);
  EXPECT_EQ(s.in_stride_batch, 56u * 56 * 64);
  EXPECT_EQ(s.in_stride_feature, 1u);
  EXPECT_EQ(s.in_stride_spatial[1], 56u * 64);
  EXPECT_EQ(s.in_stride_spatial[2], 64u);
  EXPECT_EQ(s.filter_stride_in, 64u);
  EXPECT_EQ(s.filter_stride_out, 1u);
  EXPECT_EQ(s.filter_stride_spatial[1], 3u * 64 * 64);
  EXPECT_EQ(s.out_stride_feature, 1u);
  EXPECT_EQ(plan->groups, 8 * 56 * 56 / 64);
  // 31 words: within the 128 bytes of push constants every device has.
  EXPECT_EQ(s.Words().size(), 31u);
  // The tiles, then the window (1 in the unused slot 0) and its dilation,
  // then SPATIAL, then the base dilation.
  EXPECT_EQ(plan->specialization(),
            (std::vector<uint32_t>{64, 64, 8, 4, 4, 1, 3, 3, 1, 1, 1, 2, 1, 1, 1, 0, 0, 0}));
}

TEST(VulkanConvolutionPlan, NchwWithStridesDilationAndGroups) {
  std::unique_ptr<Module> module = ConvolutionModule(
      "f32[3,12,23,21]", "f32[24,6,3,3]", "f32[3,24,11,10]",
      "window={size=3x3 stride=2x2 pad=2_1x2_1 rhs_dilate=2x2}, dim_labels=bf01_oi01->bf01, "
      "feature_group_count=2");
  ASSERT_NE(module, nullptr);
  const std::optional<ConvolutionPlan> plan = Plan(*module);
  ASSERT_TRUE(plan.has_value());
  const ConvolutionShape& s = plan->shape;
  EXPECT_EQ(s.channels, 6u);
  EXPECT_EQ(s.out_features, 12u);
  EXPECT_EQ(s.groups, 2u);
  EXPECT_EQ(s.stride[2], 2u);
  EXPECT_EQ(s.dilation[1], 2u);
  EXPECT_EQ(s.in_stride_feature, 23u * 21);
  EXPECT_EQ(s.in_stride_spatial[2], 1u);
  EXPECT_EQ(s.filter_stride_out, 6u * 9);
  EXPECT_EQ(s.filter_stride_in, 9u);
  EXPECT_EQ(s.out_stride_feature, 11u * 10);
  // 12 features a group: the narrow tiles.
  EXPECT_EQ(plan->tiles.bn, 16u);
  EXPECT_EQ(plan->groups, (3 * 11 * 10 + 255) / 256 * 2);
}

TEST(VulkanConvolutionPlan, OneSpatialDimensionIsTheLastSlot) {
  std::unique_ptr<Module> module = ConvolutionModule("f32[4,300,3]", "f32[5,3,16]", "f32[4,300,16]",
                                                     "window={size=5 pad=2_2}, dim_labels=b0f_0io->b0f");
  ASSERT_NE(module, nullptr);
  const std::optional<ConvolutionPlan> plan = Plan(*module);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->shape.in_size[0], 1u);
  EXPECT_EQ(plan->shape.in_size[1], 1u);
  EXPECT_EQ(plan->shape.window[1], 1u);
  EXPECT_EQ(plan->shape.in_size[2], 300u);
  EXPECT_EQ(plan->shape.window[2], 5u);
  EXPECT_EQ(plan->shape.pad_low[2], 2);
  EXPECT_EQ(plan->specialization()[11], 2u);
}

TEST(VulkanConvolutionPlan, NdhwcFillsAllThreeSlots) {
  // JAX's conv_general_dilated with three spatial dimensions, strides,
  // SAME-style padding, window dilation and two feature groups.
  std::unique_ptr<Module> module = ConvolutionModule(
      "f32[2,9,12,10,8]", "f32[3,2,3,4,16]", "f32[2,5,12,5,16]",
      "window={size=3x2x3 stride=2x1x2 pad=2_2x1_2x1_1 rhs_dilate=2x3x1}, dim_labels=b012f_012io->b012f, "
      "feature_group_count=2");
  ASSERT_NE(module, nullptr);
  const std::optional<ConvolutionPlan> plan = Plan(*module);
  ASSERT_TRUE(plan.has_value());
  const ConvolutionShape& s = plan->shape;
  EXPECT_EQ(s.spatial, 3u);
  EXPECT_EQ(s.batch, 2u);
  EXPECT_EQ(s.channels, 4u);
  EXPECT_EQ(s.out_features, 8u);
  EXPECT_EQ(s.groups, 2u);
  EXPECT_EQ(std::vector<uint32_t>(std::begin(s.in_size), std::end(s.in_size)),
            (std::vector<uint32_t>{9, 12, 10}));
  EXPECT_EQ(std::vector<uint32_t>(std::begin(s.out_size), std::end(s.out_size)),
            (std::vector<uint32_t>{5, 12, 5}));
  EXPECT_EQ(std::vector<uint32_t>(std::begin(s.stride), std::end(s.stride)),
            (std::vector<uint32_t>{2, 1, 2}));
  EXPECT_EQ(std::vector<int32_t>(std::begin(s.pad_low), std::end(s.pad_low)),
            (std::vector<int32_t>{2, 1, 1}));
  EXPECT_EQ(std::vector<uint32_t>(std::begin(s.in_stride_spatial), std::end(s.in_stride_spatial)),
            (std::vector<uint32_t>{12 * 10 * 8, 10 * 8, 8}));
  EXPECT_EQ(std::vector<uint32_t>(std::begin(s.filter_stride_spatial), std::end(s.filter_stride_spatial)),
            (std::vector<uint32_t>{2 * 3 * 4 * 16, 3 * 4 * 16, 4 * 16}));
  EXPECT_EQ(std::vector<uint32_t>(std::begin(s.out_stride_spatial), std::end(s.out_stride_spatial)),
            (std::vector<uint32_t>{12 * 5 * 16, 5 * 16, 16}));
  EXPECT_EQ(s.in_stride_batch, 9u * 12 * 10 * 8);
  EXPECT_EQ(s.out_stride_batch, 5u * 12 * 5 * 16);
  EXPECT_EQ(s.filter_stride_in, 16u);
  EXPECT_EQ(s.rows(), 2 * 5 * 12 * 5);
  EXPECT_EQ(s.depth(), 4 * 3 * 2 * 3);
  EXPECT_EQ(s.Words().size(), 31u);
  // Narrow tiles (8 features a group), the window 3x2x3 dilated 2x3x1, SPATIAL 3.
  EXPECT_EQ(plan->specialization(),
            (std::vector<uint32_t>{256, 16, 8, 4, 4, 3, 2, 3, 2, 3, 1, 3, 1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(plan->groups, (2 * 5 * 12 * 5 + 255) / 256 * 2);

  // NCDHW input and output, OIDHW filter: the slots follow the dimension
  // numbers' order of the spatial dimensions, strides from the layout.
  module = ConvolutionModule("f32[2,8,9,12,10]", "f32[16,4,3,2,3]", "f32[2,16,5,12,5]",
                             "window={size=3x2x3 stride=2x1x2 pad=2_2x1_2x1_1 rhs_dilate=2x3x1}, "
                             "dim_labels=bf012_oi012->bf012, feature_group_count=2");
  ASSERT_NE(module, nullptr);
  const std::optional<ConvolutionPlan> nchw = Plan(*module);
  ASSERT_TRUE(nchw.has_value());
  EXPECT_EQ(nchw->shape.in_stride_feature, 9u * 12 * 10);
  EXPECT_EQ(std::vector<uint32_t>(std::begin(nchw->shape.in_stride_spatial),
                                  std::end(nchw->shape.in_stride_spatial)),
            (std::vector<uint32_t>{12 * 10, 10, 1}));
  EXPECT_EQ(nchw->shape.filter_stride_out, 4u * 3 * 2 * 3);
  EXPECT_EQ(nchw->shape.filter_stride_in, 3u * 2 * 3);
  EXPECT_EQ(nchw->shape.out_stride_feature, 5u * 12 * 5);
  EXPECT_EQ(nchw->specialization(), plan->specialization());
}

TEST(VulkanConvolutionPlan, BaseDilationIsASpecializationConstant) {
  // A transposed convolution's base (lhs) dilation, 2-D and 3-D.
  std::unique_ptr<Module> module =
      ConvolutionModule("f32[2,20,20,8]", "f32[3,3,8,16]", "f32[2,37,37,16]",
                        "window={size=3x3 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f");
  ASSERT_NE(module, nullptr);
  std::optional<ConvolutionPlan> plan = Plan(*module);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->shape.in_size[1], 20u);
  EXPECT_EQ(plan->shape.out_size[1], 37u);
  EXPECT_EQ(plan->specialization(),
            (std::vector<uint32_t>{256, 16, 8, 4, 4, 1, 3, 3, 1, 1, 1, 2, 1, 2, 2, 0, 0, 0}));
  module = ConvolutionModule(
      "f32[2,10,10,10,8]", "f32[3,3,3,8,16]", "f32[2,19,20,17,16]",
      "window={size=3x3x3 pad=1_1x1_2x0_0 lhs_dilate=2x2x2}, dim_labels=b012f_012io->b012f");
  ASSERT_NE(module, nullptr);
  plan = Plan(*module);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->specialization(),
            (std::vector<uint32_t>{256, 16, 8, 4, 4, 3, 3, 3, 1, 1, 1, 3, 2, 2, 2, 0, 0, 0}));
  EXPECT_EQ(plan->shape.Words().size(), 31u);
}

TEST(VulkanConvolutionPlan, WindowReversalIsASpecializationConstantPerSlot) {
  // JAX's input gradient of a strided convolution: the window reversed in
  // both spatial dimensions, the input base-dilated.
  std::unique_ptr<Module> module = ConvolutionModule(
      "f32[2,20,20,8]", "f32[3,3,8,16]", "f32[2,41,41,16]",
      "window={size=3x3 pad=2_2x2_2 lhs_dilate=2x2 rhs_reversal=1x1}, dim_labels=b01f_01io->b01f");
  ASSERT_NE(module, nullptr);
  std::optional<ConvolutionPlan> plan = Plan(*module);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->specialization(),
            (std::vector<uint32_t>{256, 16, 8, 4, 4, 1, 3, 3, 1, 1, 1, 2, 1, 2, 2, 0, 1, 1}));
  // 3-D, reversed along the depth and the width only: slots 0 and 2.
  module = ConvolutionModule("f32[2,10,10,10,8]", "f32[3,3,3,8,16]", "f32[2,8,8,8,16]",
                             "window={size=3x3x3 rhs_reversal=1x0x1}, dim_labels=b012f_012io->b012f");
  ASSERT_NE(module, nullptr);
  plan = Plan(*module);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->specialization(),
            (std::vector<uint32_t>{256, 16, 8, 4, 4, 3, 3, 3, 1, 1, 1, 3, 1, 1, 1, 1, 0, 1}));
  // 1-D: its one dimension is slot 2.
  module = ConvolutionModule("f32[64,100,8]", "f32[5,8,16]", "f32[64,96,16]",
                             "window={size=5 rhs_reversal=1}, dim_labels=b0f_0io->b0f");
  ASSERT_NE(module, nullptr);
  plan = Plan(*module);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(std::vector<uint32_t>(std::begin(plan->shape.reversed), std::end(plan->shape.reversed)),
            (std::vector<uint32_t>{0, 0, 1}));
  EXPECT_EQ(plan->shape.Words().size(), 31u);
}

TEST(VulkanConvolutionPlan, WhatTheViewDoesNotHoldStaysElemental) {
  const std::string nhwc = "dim_labels=b01f_01io->b01f";
  // f64.
  std::unique_ptr<Module> module =
      ConvolutionModule("f64[2,20,20,8]", "f64[3,3,8,16]", "f64[2,18,18,16]", "window={size=3x3}, " + nhwc);
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(Plan(*module).has_value());
  // Depthwise: one output feature a group.
  module = ConvolutionModule("f32[2,40,40,8]", "f32[3,3,1,8]", "f32[2,38,38,8]",
                             "window={size=3x3}, " + nhwc + ", feature_group_count=8");
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(Plan(*module).has_value());
  // Four spatial dimensions.
  module = ConvolutionModule("f32[2,6,6,6,6,8]", "f32[3,3,3,3,8,16]", "f32[2,4,4,4,4,16]",
                             "window={size=3x3x3x3}, dim_labels=b0123f_0123io->b0123f");
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(Plan(*module).has_value());
  // Three spatial dimensions are taken (the reference for the refusals below)...
  const std::string ndhwc = "dim_labels=b012f_012io->b012f";
  module = ConvolutionModule("f32[2,10,10,10,8]", "f32[3,3,3,8,16]", "f32[2,8,8,8,16]",
                             "window={size=3x3x3}, " + ndhwc);
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(Plan(*module).has_value());
  // ...but not with batch groups,
  module = ConvolutionModule("f32[4,10,10,10,8]", "f32[3,3,3,8,16]", "f32[2,8,8,8,16]",
                             "window={size=3x3x3}, " + ndhwc + ", batch_group_count=2");
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(Plan(*module).has_value());
  // depthwise,
  module = ConvolutionModule("f32[2,10,10,10,8]", "f32[3,3,3,1,8]", "f32[2,8,8,8,8]",
                             "window={size=3x3x3}, " + ndhwc + ", feature_group_count=8");
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(Plan(*module).has_value());
  // or fewer outputs than make tiles worth it (the corpus's conv3d).
  module = ConvolutionModule("f32[1,4,5,4,8]", "f32[2,3,2,8,16]", "f32[1,4,3,4,16]",
                             "window={size=2x3x2 stride=1x2x1 pad=0_1x1_1x0_1}, " + ndhwc);
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(Plan(*module).has_value());
  // Batch groups.
  module = ConvolutionModule("f32[4,20,20,8]", "f32[3,3,8,16]", "f32[2,18,18,16]",
                             "window={size=3x3}, " + nhwc + ", batch_group_count=2");
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(Plan(*module).has_value());
  // f16 on a device without 16-bit storage.
  module =
      ConvolutionModule("f16[2,20,20,8]", "f16[3,3,8,16]", "f16[2,18,18,16]", "window={size=3x3}, " + nhwc);
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(Plan(*module).has_value());
  ShaderFeatures features = AllShaderFeatures();
  features.storage16 = false;
  EXPECT_FALSE(Plan(*module, features).has_value());
}

TEST(VulkanConvolutionPlan, TilesFollowTheDeviceAndItsLoopLimit) {
  std::unique_ptr<Module> module = ConvolutionModule("f32[2,20,20,8]", "f32[3,3,8,64]", "f32[2,18,18,64]",
                                                     "window={size=3x3}, dim_labels=b01f_01io->b01f");
  ASSERT_NE(module, nullptr);
  ShaderFeatures features = AllShaderFeatures();
  features.max_workgroup_size = 128;
  std::optional<ConvolutionPlan> plan = Plan(*module, features);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->tiles.workgroup_size(), 64u);
  EXPECT_EQ(plan->tiles.tm, 8u);
  // Subgroups of 128 fit neither 256 nor 64 invocations as whole subgroups
  // when at most 128 run: no plan.
  features.subgroup_size = 128;
  EXPECT_FALSE(Plan(*module, features).has_value());
  features.max_workgroup_size = 1024;
  plan = Plan(*module, features);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->tiles.workgroup_size(), 256u);

  // A CPU device takes fewer invocations doing more each.
  features.subgroup_size = 8;
  features.cpu_device = true;
  plan = Plan(*module, features);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->tiles.specialization(), (std::vector<uint32_t>{64, 64, 16, 8, 8}));

  // The kernel's loop bound counts every trip of a tile's contraction; past
  // the device's limit the elemental kernel takes the convolution.
  std::optional<LibraryKernel> kernel = PlanLibraryKernel(*module->entry(), AllShaderFeatures(), "c");
  ASSERT_TRUE(kernel.has_value());
  plan = Plan(*module);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(kernel->description.binding_count, 3);
  // K = 3 x 3 x 8 = 72: 9 steps of 8, in each 2 loads of the input and 2
  // of the filter per invocation, each tap carrying once.
  EXPECT_EQ(plan->loops_per_tile(), 9 * (1 + 4));
  EXPECT_EQ(kernel->description.max_loop_iterations, 1 + plan->loops_per_tile());
  features = AllShaderFeatures();
  features.max_loop_iterations = plan->loops_per_tile();
  EXPECT_FALSE(PlanLibraryKernel(*module->entry(), features, "c").has_value());
}

TEST(VulkanLibraryShaders, EveryConvolutionVariantPassesTheSpirvSteps) {
  for (LibraryShader shader : {LibraryShader::kConvolutionF32, LibraryShader::kConvolutionF16}) {
    SCOPED_TRACE(std::string(LibraryShaderName(shader)));
    StatusOr<std::vector<uint32_t>> words = LibraryShaderSpirv(shader, kAllFloatControls);
    ASSERT_TRUE(words.ok()) << words.status().ToString();
    EXPECT_EQ((*words)[0], 0x07230203u);
  }
}

}  // namespace
}  // namespace kiln::vulkan
