// A sort compiled for Vulkan carries its dispatches in its kernel
// description as the backend-neutral launch list the CUDA backend reads
// too (KernelDescription::launches, BitonicSortLaunches): each launch's
// parameters become the shader's push constants, every launch has the
// kernel's workgroup size (a specialization constant). No device needed.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/vulkan/glsl_bitonic_sort.h"
#include "backends/vulkan/vulkan_program.h"
#include "core/hlo_parser.h"
#include "core/lowering/bitonic_sort.h"

namespace kiln::vulkan {
namespace {

std::string SortRowsModule(int64_t rows, int64_t length) {
  const std::string shape = "f32[" + std::to_string(rows) + "," + std::to_string(length) + "]";
  return "HloModule sort\nless {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
         "  ROOT lt = pred[] compare(a, b), direction=LT\n}\n"
         "ENTRY main {\n  x = " +
         shape + " parameter(0)\n  ROOT s = " + shape + " sort(x), dimensions={1}, to_apply=less\n}\n";
}

TEST(VulkanSortLaunches, TheDescriptionHoldsTheBitonicLaunches) {
  const ShaderFeatures features = AllShaderFeatures();
  for (const auto& [rows, length] :
       std::vector<std::pair<int64_t, int64_t>>{{3, 5000}, {1, 70000}, {2, 9000}}) {
    SCOPED_TRACE(std::to_string(rows) + " rows of " + std::to_string(length));
    StatusOr<std::unique_ptr<Module>> module = ParseHloModule(SortRowsModule(rows, length));
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    StatusOr<std::unique_ptr<VulkanProgram>> program =
        CompileForVulkan(**module, features, 256, /*optimization_level=*/2);
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    const KernelDescription* sort = nullptr;
    for (const KernelDescription& kernel : (*program)->kernels)
      if (kernel.computation->root()->opcode == Opcode::kSort) sort = &kernel;
    ASSERT_NE(sort, nullptr);

    const BitonicSortLayout layout = PlanBitonicSort(rows, length, rows * length, features);
    BitonicLaunchPlan plan;
    plan.rows = rows;
    plan.length = length;
    plan.finish_iterations = rows * length;
    plan.tile = BitonicDeviceTile(features);
    plan.tile_group_elements = layout.chunk;
    plan.group_size = layout.workgroup_size;
    plan.max_workgroups = kGlslMaxWorkgroups;
    const std::vector<KernelLaunch> expected = BitonicSortLaunches(plan);
    const int64_t padded = BitonicPaddedLength(length);
    ASSERT_EQ(expected.size(), BitonicSortPasses(padded, layout.tile).size() + 1);
    ASSERT_EQ(sort->launches.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      const KernelLaunch& launch = sort->launches[i];
      EXPECT_EQ(launch.parameters, expected[i].parameters) << "launch " << i;
      EXPECT_EQ(launch.grid.workgroups, expected[i].grid.workgroups) << "launch " << i;
      EXPECT_EQ(launch.grid.workgroup_size[0], sort->grid.workgroup_size[0]) << "launch " << i;
      EXPECT_EQ(launch.grid.workgroup_size[0], layout.workgroup_size) << "launch " << i;
    }
    // The push constants: one 32-bit word per parameter.
    const CompiledShader& shader =
        (*program)->shaders[static_cast<size_t>(sort - (*program)->kernels.data())];
    EXPECT_EQ(shader.glsl.push_constant_bytes, 4 * kBitonicLaunchParameterCount);
    EXPECT_EQ(sort->launches.back().parameters,
              (std::vector<int64_t>{static_cast<int64_t>(BitonicLaunchMode::kFinish), 0, 0}));
  }
}

}  // namespace
}  // namespace kiln::vulkan
