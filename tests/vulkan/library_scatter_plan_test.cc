// Which scatters run the library scatter-add (library_scatter.h) and with
// what variant, workgroup, launches and push constants, and that its
// embedded SPIR-V passes the steps every kernel passes. No device needed:
// the features are given.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/vulkan/library_kernels.h"
#include "backends/vulkan/library_scatter.h"
#include "backends/vulkan/library_shaders.h"
#include "core/hlo_parser.h"

namespace kiln::vulkan {
namespace {

// A module scattering `updates` into `operand` by `indices` with
// `combiner` applied to elements of `type`; `dimensions` its attributes
// after the operands.
std::unique_ptr<Module> ScatterModule(const std::string& type, const std::string& op,
                                      const std::string& operand, const std::string& indices,
                                      const std::string& updates, const std::string& dimensions) {
  const std::string text = "HloModule s\ncombine {\n  x = " + type + "[] parameter(0)\n  y = " + type +
                           "[] parameter(1)\n  ROOT r = " + type + "[] " + op +
                           "(x, y)\n}\nENTRY main {\n  a = " + operand + " parameter(0)\n  i = " + indices +
                           " parameter(1)\n  u = " + updates + " parameter(2)\n  ROOT s = " + operand +
                           " scatter(a, i, u), " + dimensions + ", to_apply=combine\n}\n";
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString() << "\n" << text;
  return module.ok() ? std::move(module).value() : nullptr;
}

const char kRows[] =
    "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1";

std::optional<ScatterAddPlan> ScatterAddPlanOf(const Module* module,
                                               const ShaderFeatures& features = AllShaderFeatures()) {
  if (module == nullptr) return std::nullopt;
  return PlanKernelScatterAdd(*module->entry(), features);
}

TEST(VulkanScatterAddPlan, AddingRowsTakesTheLibraryShader) {
  const std::unique_ptr<Module> module =
      ScatterModule("f32", "add", "f32[100,16]", "s32[300,1]", "f32[300,16]", kRows);
  const std::optional<ScatterAddPlan> plan = ScatterAddPlanOf(module.get());
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->shader, LibraryShader::kScatterAddF32);
  EXPECT_EQ(plan->shape.Words(), (std::vector<uint32_t>{1600, 4800, 16, 100}));
  ASSERT_EQ(plan->launches.size(), 2u);
  // The copy, then the adds, each its mode as the push constant; the
  // shape as specialization constants.
  EXPECT_EQ(plan->launches[0].parameters, (std::vector<int64_t>{0}));
  EXPECT_EQ(plan->launches[1].parameters, (std::vector<int64_t>{1}));
  EXPECT_EQ(plan->workgroup_size, 256u);
  EXPECT_EQ(plan->launches[1].grid.workgroups[0], (4800 + 255) / 256);

  const std::optional<LibraryKernel> kernel = PlanLibraryKernel(*module->entry(), AllShaderFeatures(), "s");
  ASSERT_TRUE(kernel.has_value());
  EXPECT_EQ(kernel->shader, LibraryShader::kScatterAddF32);
  EXPECT_EQ(kernel->description.binding_count, 4);
  EXPECT_EQ(kernel->description.push_constant_bytes, 4);
  EXPECT_EQ(kernel->specialization, (std::vector<uint32_t>{1600, 4800, 16, 100}));
  EXPECT_EQ(kernel->description.launches.size(), 2u);
}

TEST(VulkanScatterAddPlan, TypesIndicesAndShapes) {
  // Integers of 32 bits, one variant; u32 indices; scalar indices.
  std::unique_ptr<Module> module =
      ScatterModule("s32", "add", "s32[100,16]", "s32[300,1]", "s32[300,16]", kRows);
  ASSERT_TRUE(ScatterAddPlanOf(module.get()).has_value());
  EXPECT_EQ(ScatterAddPlanOf(module.get())->shader, LibraryShader::kScatterAddI32);
  module = ScatterModule("u32", "add", "u32[100,16]", "u32[300,1]", "u32[300,16]", kRows);
  ASSERT_TRUE(ScatterAddPlanOf(module.get()).has_value());
  EXPECT_EQ(ScatterAddPlanOf(module.get())->shader, LibraryShader::kScatterAddI32);
  module = ScatterModule("f32", "add", "f32[7,3,5]", "s32[4,6]", "f32[4,6,3,5]",
                         "update_window_dims={2,3}, inserted_window_dims={0}, "
                         "scatter_dims_to_operand_dims={0}, index_vector_dim=2");
  std::optional<ScatterAddPlan> plan = ScatterAddPlanOf(module.get());
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->shape.Words(), (std::vector<uint32_t>{105, 360, 15, 7}));
  // Workgroups within the device's invocations.
  ShaderFeatures small = AllShaderFeatures();
  small.max_workgroup_size = 96;
  plan = ScatterAddPlanOf(module.get(), small);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->workgroup_size, 64u);
}

TEST(VulkanScatterAddPlan, OtherScattersStayGenerated) {
  // f32 without float atomics (the compare-and-swap loop is generated).
  std::unique_ptr<Module> module =
      ScatterModule("f32", "add", "f32[100,16]", "s32[300,1]", "f32[300,16]", kRows);
  ShaderFeatures no_float_atomics = AllShaderFeatures();
  no_float_atomics.float32_atomic_add = false;
  EXPECT_FALSE(ScatterAddPlanOf(module.get(), no_float_atomics).has_value());
  // Other combiners and types.
  module = ScatterModule("s32", "maximum", "s32[100,16]", "s32[300,1]", "s32[300,16]", kRows);
  EXPECT_FALSE(ScatterAddPlanOf(module.get()).has_value());
  module = ScatterModule("f64", "add", "f64[100,16]", "s32[300,1]", "f64[300,16]", kRows);
  EXPECT_FALSE(ScatterAddPlanOf(module.get()).has_value());
  module = ScatterModule("f32", "add", "f32[100,16]", "s64[300,1]", "f32[300,16]", kRows);
  EXPECT_FALSE(ScatterAddPlanOf(module.get()).has_value());
  // Windows narrower than a row, and two index components.
  module = ScatterModule("f32", "add", "f32[100,16]", "s32[300,1]", "f32[300,4]", kRows);
  EXPECT_FALSE(ScatterAddPlanOf(module.get()).has_value());
  module = ScatterModule("f32", "add", "f32[20,30]", "s32[200,2]", "f32[200,4]",
                         "update_window_dims={1}, inserted_window_dims={0}, "
                         "scatter_dims_to_operand_dims={0,1}, index_vector_dim=1");
  EXPECT_FALSE(ScatterAddPlanOf(module.get()).has_value());
  // An operand computed in the kernel.
  StatusOr<std::unique_ptr<Module>> computed = ParseHloModule(
      "HloModule s\ncombine {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT r = f32[] add(x, "
      "y)\n}\n"
      "ENTRY main {\n  z = f32[] constant(0)\n  a = f32[100] broadcast(z), dimensions={}\n"
      "  i = s32[10] parameter(0)\n  u = f32[10] parameter(1)\n  ROOT s = f32[100] scatter(a, i, u), "
      "update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
      "index_vector_dim=1, "
      "to_apply=combine\n}\n");
  ASSERT_TRUE(computed.ok()) << computed.status().ToString();
  EXPECT_FALSE(ScatterAddPlanOf(computed->get()).has_value());
}

TEST(VulkanLibraryShaders, EveryScatterAddVariantPassesTheSpirvSteps) {
  for (LibraryShader shader : {LibraryShader::kScatterAddF32, LibraryShader::kScatterAddI32}) {
    SCOPED_TRACE(std::string(LibraryShaderName(shader)));
    StatusOr<std::vector<uint32_t>> words = LibraryShaderSpirv(shader, kAllFloatControls);
    ASSERT_TRUE(words.ok()) << words.status().ToString();
    EXPECT_GT(words->size(), 5u);
    EXPECT_EQ((*words)[0], 0x07230203u);
  }
}

}  // namespace
}  // namespace kiln::vulkan
