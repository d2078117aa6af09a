// Which convolutions run the library convolution (library_convolution.h)
// and with what tiles and push constants. No device needed.
#include <cstdint>
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
  EXPECT_EQ(s.pad_low[0], 1);
  EXPECT_EQ(s.in_stride_batch, 56u * 56 * 64);
  EXPECT_EQ(s.in_stride_feature, 1u);
  EXPECT_EQ(s.in_stride_spatial[0], 56u * 64);
  EXPECT_EQ(s.in_stride_spatial[1], 64u);
  EXPECT_EQ(s.filter_stride_in, 64u);
  EXPECT_EQ(s.filter_stride_out, 1u);
  EXPECT_EQ(s.filter_stride_spatial[0], 3u * 64 * 64);
  EXPECT_EQ(s.out_stride_feature, 1u);
  EXPECT_EQ(plan->groups, 8 * 56 * 56 / 64);
  EXPECT_EQ(s.Words().size(), 28u);
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
  EXPECT_EQ(s.stride[1], 2u);
  EXPECT_EQ(s.dilation[0], 2u);
  EXPECT_EQ(s.in_stride_feature, 23u * 21);
  EXPECT_EQ(s.in_stride_spatial[1], 1u);
  EXPECT_EQ(s.filter_stride_out, 6u * 9);
  EXPECT_EQ(s.filter_stride_in, 9u);
  EXPECT_EQ(s.out_stride_feature, 11u * 10);
  // 12 features a group: the narrow tiles.
  EXPECT_EQ(plan->tiles.bn, 16u);
  EXPECT_EQ(plan->groups, (3 * 11 * 10 + 255) / 256 * 2);
}

TEST(VulkanConvolutionPlan, OneSpatialDimensionIsTheSecond) {
  std::unique_ptr<Module> module = ConvolutionModule("f32[4,300,3]", "f32[5,3,16]", "f32[4,300,16]",
                                                     "window={size=5 pad=2_2}, dim_labels=b0f_0io->b0f");
  ASSERT_NE(module, nullptr);
  const std::optional<ConvolutionPlan> plan = Plan(*module);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->shape.in_size[0], 1u);
  EXPECT_EQ(plan->shape.window[0], 1u);
  EXPECT_EQ(plan->shape.in_size[1], 300u);
  EXPECT_EQ(plan->shape.window[1], 5u);
  EXPECT_EQ(plan->shape.pad_low[1], 2);
}

TEST(VulkanConvolutionPlan, WhatTheViewDoesNotHoldStaysElemental) {
  const std::string nhwc = "dim_labels=b01f_01io->b01f";
  // Base (lhs) dilation.
  std::unique_ptr<Module> module = ConvolutionModule("f32[2,20,20,8]", "f32[3,3,8,16]", "f32[2,37,37,16]",
                                                     "window={size=3x3 lhs_dilate=2x2}, " + nhwc);
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(Plan(*module).has_value());
  // f64.
  module =
      ConvolutionModule("f64[2,20,20,8]", "f64[3,3,8,16]", "f64[2,18,18,16]", "window={size=3x3}, " + nhwc);
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(Plan(*module).has_value());
  // Depthwise: one output feature a group.
  module = ConvolutionModule("f32[2,40,40,8]", "f32[3,3,1,8]", "f32[2,38,38,8]",
                             "window={size=3x3}, " + nhwc + ", feature_group_count=8");
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(Plan(*module).has_value());
  // Three spatial dimensions.
  module = ConvolutionModule("f32[2,10,10,10,8]", "f32[3,3,3,8,16]", "f32[2,8,8,8,16]",
                             "window={size=3x3x3}, dim_labels=b012f_012io->b012f");
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

}  // namespace
}  // namespace kiln::vulkan
