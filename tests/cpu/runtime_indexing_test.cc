// gather, scatter and select-and-scatter on the whole CPU backend: gather and
// scatter are lowered to compiled kernels, select-and-scatter to its own
// thunk (no library thunk), and each agrees with the interpreter.
#include "backends/cpu/cpu_executable.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

void ExpectKernelsOnly(const std::string& text) {
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  CpuBackend cpu;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, CompileOptions()));
  const auto& statistics = static_cast<const CpuExecutable&>(*executable).program().statistics;
  EXPECT_EQ(statistics.thunks.count("library"), 0u);
  EXPECT_GE(statistics.thunks.count("kernel"), 1u);
  testing::ExpectMatchesInterpreter(text, 1e-5);
}

TEST(RuntimeIndexingTest, GatherOfRowsIsAKernel) {
  ExpectKernelsOnly(R"(HloModule m
ENTRY e {
  x = f32[6,4] parameter(0)
  i = s32[5] parameter(1)
  ROOT g = f32[5,4] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
})");
}

TEST(RuntimeIndexingTest, ScatterAddIsAKernel) {
  ExpectKernelsOnly(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY e {
  x = f32[4,5] parameter(0)
  i = s32[6,2] parameter(1)
  u = f32[6] parameter(2)
  ROOT s = f32[4,5] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=add
})");
}

// Select-and-scatter runs as its own thunk (window_thunk.h; its cases are in
// runtime_window_test.cc), never on the library path.
TEST(RuntimeIndexingTest, MaxPoolGradientIsASelectAndScatterThunk) {
  const std::string text = R"(HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY e {
  x = f32[2,6,6,3] parameter(0)
  s = f32[2,3,3,3] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[2,6,6,3] select-and-scatter(x, s, z), window={size=1x2x2x1 stride=1x2x2x1}, select=ge, scatter=add
})";
  EXPECT_EQ(testing::CountThunks(text, "library"), 0);
  EXPECT_EQ(testing::CountThunks(text, "select-and-scatter"), 1);
  testing::ExpectMatchesInterpreter(text, 0);
}

}  // namespace
}  // namespace kiln::cpu
