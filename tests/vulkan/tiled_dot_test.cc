// Dots that the vulkan backend computes with the library dot's
// shared-memory tiles (library_dot.h), on lavapipe with the validation
// layers on, against the interpreter: sizes that
// are not multiples of the tile, operands contracted along either dimension,
// batch dimensions in any position, and NaN and infinities where they land.
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/vulkan/vulkan_backend.h"
#include "backends/vulkan/vulkan_device.h"
#include "backends/vulkan/vulkan_program.h"
#include "core/hlo_parser.h"
#include "tests/unit/test_util.h"
#include "tests/vulkan/interpreter_agreement.h"
#include "tests/vulkan/library_shader_test.h"

namespace kiln::vulkan {
namespace {

struct DotCase {
  const char* name;
  std::string lhs, rhs, out, dims;  // shapes and dot attributes
};

// Deterministic values in [-1, 1) with a few exact special values.
Literal Values(const Shape& shape, uint32_t seed, bool specials) {
  std::vector<float> values = SignedUnitValues(shape.element_count(), seed);
  if (specials && values.size() > 100) {
    values[7] = std::numeric_limits<float>::quiet_NaN();
    values[50] = std::numeric_limits<float>::infinity();
    values[99] = -std::numeric_limits<float>::infinity();
  }
  return Literal::FromVector(values, shape.dimensions());
}

using TiledDotTest = LibraryShaderTest<DotCase>;

TEST_P(TiledDotTest, AgreesWithTheInterpreter) {
  const DotCase& c = GetParam();
  const std::string text = "HloModule tiled_dot\nENTRY main {\n  a = " + c.lhs +
                           " parameter(0)\n  b = " + c.rhs + " parameter(1)\n  ROOT d = " + c.out +
                           " dot(a, b), " + c.dims + "\n}\n";
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseHloModule(text));
  const Computation& entry = *module->entry();
  std::vector<Literal> arguments;
  arguments.push_back(Values(entry.parameters()[0]->shape, 1, true));
  arguments.push_back(Values(entry.parameters()[1]->shape, 2, false));

  // The library dot (library_dot.h).
  ForThisDeviceAndAGpu(*module, LibraryShader::kTiledDot, c.name, [&] {
    const int64_t nans = ExpectVulkanAgreesWithInterpreter(*module, arguments, c.name);
    EXPECT_GT(nans, 0) << c.name << ": the planted NaN and infinities should reach some outputs";
  });
}

// Executions after the first take their scratch block and results from the
// device's memory cache: no vkAllocateMemory per execute (on an H200 each
// execute cost about 1.3 ms while they allocated).
TEST(VulkanExecuteTest, RepeatedExecutesReuseDeviceMemory) {
  KILN_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Module> module,
      ParseHloModule(
          "HloModule m\nENTRY main {\n  a = f32[70,45] parameter(0)\n  b = f32[45,100] parameter(1)\n"
          "  d = f32[70,100] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
          "  ROOT n = f32[70,100] negate(d)\n}\n"));
  StatusOr<std::unique_ptr<Backend>> vulkan = CreateBackend("vulkan");
  ASSERT_TRUE(vulkan.ok()) << vulkan.status().ToString();
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable,
                            (*vulkan)->Compile(*module, CompileOptions{}));
  kiln::Device* device = (*vulkan)->devices()[0];
  std::vector<std::unique_ptr<DeviceBuffer>> owned;
  std::vector<DeviceBuffer*> arguments;
  uint32_t seed = 1;
  for (const Instruction* parameter : module->entry()->parameters()) {
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<DeviceBuffer> buffer,
                              (*vulkan)->BufferFromLiteral(Values(parameter->shape, seed++, false), device));
    arguments.push_back(buffer.get());
    owned.push_back(std::move(buffer));
  }
  KILN_ASSERT_OK_AND_ASSIGN(std::shared_ptr<vulkan::Device> vulkan_device, vulkan::Device::Default());
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<std::unique_ptr<DeviceBuffer>> first,
                            executable->Execute(arguments, ExecuteOptions{}));
  KILN_ASSERT_OK_AND_ASSIGN(Literal want, first[0]->ToLiteral());
  first.clear();
  const uint64_t allocations = vulkan_device->memory_allocations();
  for (int run = 0; run < 5; ++run) {
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<std::unique_ptr<DeviceBuffer>> results,
                              executable->Execute(arguments, ExecuteOptions{}));
    KILN_ASSERT_OK_AND_ASSIGN(Literal got, results[0]->ToLiteral());
    EXPECT_EQ(got, want) << "run " << run;
  }
  EXPECT_EQ(vulkan_device->memory_allocations(), allocations) << "executes after the first allocated memory";
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, TiledDotTest,
    ::testing::Values(
        DotCase{"row_major", "f32[70,45]", "f32[45,100]", "f32[70,100]",
                "lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
        DotCase{"exact_tiles", "f32[64,64]", "f32[64,128]", "f32[64,128]",
                "lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
        DotCase{"both_transposed", "f32[45,70]", "f32[100,45]", "f32[70,100]",
                "lhs_contracting_dims={0}, rhs_contracting_dims={1}"},
        DotCase{"leading_batch", "f32[3,40,33]", "f32[3,33,66]", "f32[3,40,66]",
                "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}"},
        DotCase{"inner_batch", "f32[40,2,33]", "f32[33,2,66]", "f32[2,40,66]",
                "lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={1}, rhs_contracting_dims={0}"},
        DotCase{"two_batch_dims", "f32[2,3,33,40]", "f32[3,2,33,35]", "f32[2,3,40,35]",
                "lhs_batch_dims={0,1}, lhs_contracting_dims={2}, rhs_batch_dims={1,0}, "
                "rhs_contracting_dims={2}"}),
    [](const ::testing::TestParamInfo<DotCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace kiln::vulkan
