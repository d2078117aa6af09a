// Which kernels run the library transpose (library_transpose.h) and with
// what tiles and push constants, and that its embedded SPIR-V passes the
// steps every kernel passes. No device needed: the features are given.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/vulkan/library_kernels.h"
#include "backends/vulkan/library_shaders.h"
#include "backends/vulkan/library_transpose.h"
#include "backends/vulkan/vulkan_program.h"
#include "core/hlo_parser.h"

namespace kiln::vulkan {
namespace {

TEST(VulkanTransposePlan, ASquareMatrixIsOnePlaneOfTiles) {
  const std::optional<TransposePlan> plan = PlanTranspose({2048, 2048}, {1, 0}, 4, AllShaderFeatures());
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->shader, LibraryShader::kTranspose4);
  EXPECT_EQ(plan->tile, 32u);
  EXPECT_EQ(plan->rows, 8u);
  EXPECT_EQ(plan->shape.extent_a, 2048u);
  EXPECT_EQ(plan->shape.extent_b, 2048u);
  EXPECT_EQ(plan->shape.in_stride_a, 2048u);
  EXPECT_EQ(plan->shape.out_stride_b, 2048u);
  EXPECT_EQ(plan->shape.outer_count, 0u);
  EXPECT_EQ(plan->workgroups, (std::array<int64_t, 3>{64, 64, 1}));
}

TEST(VulkanTransposePlan, OtherDimensionsBecomePlanes) {
  // [2,3,4] -> [2,4,3]: the tiles are 3 x 4, dimension 0 picks the plane.
  const std::optional<TransposePlan> plan = PlanTranspose({2, 3, 4}, {0, 2, 1}, 4, AllShaderFeatures());
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->shape.extent_a, 3u);
  EXPECT_EQ(plan->shape.extent_b, 4u);
  EXPECT_EQ(plan->shape.in_stride_a, 4u);
  EXPECT_EQ(plan->shape.out_stride_b, 3u);
  EXPECT_EQ(plan->shape.outer_count, 1u);
  EXPECT_EQ(plan->shape.outer_extent[0], 2u);
  EXPECT_EQ(plan->shape.outer_in_stride[0], 12u);
  EXPECT_EQ(plan->shape.outer_out_stride[0], 12u);
  EXPECT_EQ(plan->shape.outer_extent[1], 1u);
  EXPECT_EQ(plan->workgroups, (std::array<int64_t, 3>{1, 1, 2}));
}

TEST(VulkanTransposePlan, UnitAndNeighbouringDimensionsMerge) {
  // [4,1,5,6] -> [5,6,4,1] moves blocks of 30: a 4 x 30 matrix transposed.
  const std::optional<TransposePlan> plan = PlanTranspose({4, 1, 5, 6}, {2, 3, 0, 1}, 2, AllShaderFeatures());
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->shader, LibraryShader::kTranspose2);
  EXPECT_EQ(plan->shape.extent_a, 4u);
  EXPECT_EQ(plan->shape.extent_b, 30u);
  EXPECT_EQ(plan->shape.in_stride_a, 30u);
  EXPECT_EQ(plan->shape.out_stride_b, 4u);
  EXPECT_EQ(plan->shape.outer_count, 0u);
}

TEST(VulkanTransposePlan, TransposesThatKeepTheMinorDimensionStayElemental) {
  const ShaderFeatures features = AllShaderFeatures();
  EXPECT_FALSE(PlanTranspose({3, 4, 5}, {1, 0, 2}, 4, features).has_value());
  // Only unit dimensions move: no element moves.
  EXPECT_FALSE(PlanTranspose({1, 7}, {1, 0}, 4, features).has_value());
  // Seven dimensions reversed: five outer dimensions, one too many; six
  // leave four.
  EXPECT_FALSE(PlanTranspose({2, 3, 4, 5, 6, 7, 2}, {6, 5, 4, 3, 2, 1, 0}, 4, features).has_value());
  EXPECT_TRUE(PlanTranspose({2, 3, 4, 5, 6, 7}, {5, 4, 3, 2, 1, 0}, 4, features).has_value());
  // 2^32 elements do not fit the shader's 32-bit indices.
  EXPECT_FALSE(PlanTranspose({65536, 65536}, {1, 0}, 1, features).has_value());
  // Planes past the 65535 workgroups every device launches along z.
  EXPECT_FALSE(PlanTranspose({65536, 2, 3}, {0, 2, 1}, 4, features).has_value());
  EXPECT_TRUE(PlanTranspose({65535, 2, 3}, {0, 2, 1}, 4, features).has_value());
}

TEST(VulkanTransposePlan, NarrowWidthsNeedTheirStorage) {
  ShaderFeatures features = AllShaderFeatures();
  features.storage8 = false;
  EXPECT_FALSE(PlanTranspose({64, 64}, {1, 0}, 1, features).has_value());
  EXPECT_TRUE(PlanTranspose({64, 64}, {1, 0}, 2, features).has_value());
  features.storage16 = false;
  EXPECT_FALSE(PlanTranspose({64, 64}, {1, 0}, 2, features).has_value());
  // Wide elements need no arithmetic on their type: raw words.
  features.f64 = features.i64 = false;
  EXPECT_TRUE(PlanTranspose({64, 64}, {1, 0}, 8, features).has_value());
  EXPECT_TRUE(PlanTranspose({64, 64}, {1, 0}, 16, features).has_value());
  EXPECT_FALSE(PlanTranspose({64, 64}, {1, 0}, 3, features).has_value());
}

TEST(VulkanTransposePlan, TilesAndWorkgroupsFollowTheDeviceLimits) {
  ShaderFeatures features = AllShaderFeatures();
  // 32 x 33 tiles of 16 bytes take 16896 bytes: a device with the minimum
  // 16384 gets 16 x 16 tiles.
  features.max_shared_memory_bytes = 16384;
  std::optional<TransposePlan> plan = PlanTranspose({100, 100}, {1, 0}, 16, features);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->tile, 16u);
  EXPECT_EQ(plan->workgroups[1], 7);
  plan = PlanTranspose({100, 100}, {1, 0}, 4, features);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->tile, 32u);
  // A CPU device takes larger tiles in shorter passes, as its shared
  // memory allows.
  features.cpu_device = true;
  plan = PlanTranspose({100, 100}, {1, 0}, 4, features);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->tile, 32u);  // 64 x 65 words pass 16384 bytes
  features.max_shared_memory_bytes = 32768;
  plan = PlanTranspose({100, 100}, {1, 0}, 4, features);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->tile, 64u);
  EXPECT_EQ(plan->rows, 4u);
  features.cpu_device = false;
  // At most the device's invocations a workgroup.
  features.max_workgroup_size = 128;
  plan = PlanTranspose({100, 100}, {1, 0}, 4, features);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->workgroup_size(), 128u);
  EXPECT_EQ(plan->rows, 4u);
  // Whole subgroups of whatever size the device has.
  features.max_workgroup_size = 1024;
  for (int subgroup : {1, 4, 8, 16, 32, 64, 128}) {
    features.subgroup_size = subgroup;
    plan = PlanTranspose({100, 100}, {1, 0}, 4, features);
    ASSERT_TRUE(plan.has_value());
    EXPECT_EQ(plan->workgroup_size() % static_cast<uint32_t>(subgroup), 0u) << "subgroup " << subgroup;
  }
  // A tile of 8 has room for 64 invocations, one row each: subgroups of
  // 128 cannot be whole, and the rows do not pass the tile's.
  features.max_shared_memory_bytes = 2048;
  plan = PlanTranspose({100, 100}, {1, 0}, 16, features);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->tile, 8u);
  EXPECT_EQ(plan->rows, 8u);
}

std::unique_ptr<Module> ParseModule(const std::string& text) {
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

TEST(VulkanTransposePlan, AKernelOfOneTransposeOfItsParameterTakesTheShader) {
  std::unique_ptr<Module> alone = ParseModule(
      "HloModule t\nENTRY main {\n  p = f32[30,40] parameter(0)\n"
      "  ROOT t = f32[40,30] transpose(p), dimensions={1,0}\n}\n");
  ASSERT_NE(alone, nullptr);
  const std::optional<LibraryKernel> kernel = PlanLibraryKernel(*alone->entry(), AllShaderFeatures(), "t");
  ASSERT_TRUE(kernel.has_value());
  EXPECT_EQ(kernel->shader, LibraryShader::kTranspose4);
  EXPECT_EQ(kernel->specialization, (std::vector<uint32_t>{32, 8}));
  EXPECT_EQ(kernel->description.binding_count, 2);
  EXPECT_EQ(kernel->description.workgroup_size, 256);
  ASSERT_EQ(kernel->description.launches.size(), 1u);
  const std::optional<TransposePlan> plan = PlanTranspose({30, 40}, {1, 0}, 4, AllShaderFeatures());
  ASSERT_TRUE(plan.has_value());
  const std::vector<uint32_t> words = plan->shape.Words();
  EXPECT_EQ(kernel->description.push_constant_bytes, static_cast<int>(words.size() * 4));
  EXPECT_EQ(kernel->description.launches[0].parameters, std::vector<int64_t>(words.begin(), words.end()));
  // 30 x 40: 2 tiles along the input's rows (x), 1 along its columns (y).
  EXPECT_EQ(kernel->description.launches[0].grid.workgroups, (std::array<int64_t, 3>{2, 1, 1}));
  EXPECT_EQ(kernel->description.launches[0].grid.workgroup_size[0], 256);

  std::unique_ptr<Module> fused = ParseModule(
      "HloModule t\nENTRY main {\n  p = f32[30,40] parameter(0)\n"
      "  t = f32[40,30] transpose(p), dimensions={1,0}\n  ROOT n = f32[40,30] negate(t)\n}\n");
  ASSERT_NE(fused, nullptr);
  EXPECT_FALSE(PlanLibraryKernel(*fused->entry(), AllShaderFeatures(), "n").has_value());
}

// The library shaders of the program compiled from a module transposing an
// s8[30,40,5] parameter by `permutation` into `result`.
std::vector<const CompiledShader*> LibraryShadersOfTranspose(const std::string& result,
                                                             const std::string& permutation) {
  std::unique_ptr<Module> module =
      ParseModule("HloModule t\nENTRY main {\n  p = s8[30,40,5] parameter(0)\n  ROOT t = " + result +
                  " transpose(p), dimensions={" + permutation + "}\n}\n");
  if (module == nullptr) return {};
  StatusOr<std::unique_ptr<VulkanProgram>> program = CompileForVulkan(*module, AllShaderFeatures(), 256, 2);
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  if (!program.ok()) return {};
  static std::vector<std::unique_ptr<VulkanProgram>> kept;  // the shaders returned live as long as the test
  kept.push_back(std::move(program).value());
  std::vector<const CompiledShader*> library;
  for (const CompiledShader& shader : kept.back()->shaders)
    if (shader.library.has_value()) library.push_back(&shader);
  return library;
}

TEST(VulkanTransposePlan, TheProgramRunsTheLibraryShaderOnlyWhereItPlansOne) {
  const std::vector<const CompiledShader*> moved = LibraryShadersOfTranspose("s8[5,40,30]", "2,1,0");
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(*moved[0]->library, LibraryShader::kTranspose1);
  EXPECT_EQ(moved[0]->specialization, (std::vector<uint32_t>{32, 8}));
  EXPECT_NE(moved[0]->glsl.source.find("library shader transpose_1"), std::string::npos)
      << moved[0]->glsl.source;
  // A transpose that moves whole rows of 5 stays elemental.
  EXPECT_TRUE(LibraryShadersOfTranspose("s8[40,30,5]", "1,0,2").empty());
}

TEST(VulkanLibraryShaders, EveryVariantPassesTheSpirvSteps) {
  for (LibraryShader shader :
       {LibraryShader::kTranspose1, LibraryShader::kTranspose2, LibraryShader::kTranspose4,
        LibraryShader::kTranspose8, LibraryShader::kTranspose16}) {
    SCOPED_TRACE(std::string(LibraryShaderName(shader)));
    StatusOr<std::vector<uint32_t>> words = LibraryShaderSpirv(shader, kAllFloatControls);
    ASSERT_TRUE(words.ok()) << words.status().ToString();
    EXPECT_GT(words->size(), 5u);
    EXPECT_EQ((*words)[0], 0x07230203u);
  }
}

}  // namespace
}  // namespace kiln::vulkan
