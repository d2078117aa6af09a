// Buffer assignment: what a compiled program decided (reuse, in-place
// dynamic-update-slice, direct results); the arena planner on its own is
// tested in tests/unit/arena_planner_test.cc.
#include "backends/cpu/cpu_executable.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

const CompiledProgram& ProgramOf(const Executable& executable) {
  return static_cast<const CpuExecutable&>(executable).program();
}

TEST(RuntimeLoweringTest, IdenticalFusionsShareOneKernel) {
  // Three fusions of the same ops on the same shapes, between dots (never
  // fused), and one that differs in a constant.
  const char* text = R"(HloModule m
ENTRY e {
  x = f32[4,4] parameter(0)
  w = f32[4,4] parameter(1)
  one = f32[] constant(1)
  ones = f32[4,4] broadcast(one), dimensions={}
  two = f32[] constant(2)
  twos = f32[4,4] broadcast(two), dimensions={}
  e0 = f32[4,4] tanh(x)
  a0 = f32[4,4] add(e0, ones)
  d0 = f32[4,4] dot(a0, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e1 = f32[4,4] tanh(d0)
  a1 = f32[4,4] add(e1, ones)
  d1 = f32[4,4] dot(a1, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e2 = f32[4,4] tanh(d1)
  a2 = f32[4,4] add(e2, ones)
  d2 = f32[4,4] dot(a2, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e3 = f32[4,4] tanh(d2)
  ROOT a3 = f32[4,4] add(e3, twos)
})";
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  CpuBackend cpu;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, CompileOptions()));
  const CompiledProgram& program = ProgramOf(*executable);
  EXPECT_EQ(program.statistics.thunks.at("kernel"), 4);
  EXPECT_EQ(program.statistics.distinct_kernels, 2);
  testing::ExpectMatchesInterpreter(text);
}

TEST(RuntimeBufferAssignmentTest, InPlaceDynamicUpdateSliceWhenTheOperandDies) {
  const char* text = R"(HloModule m
ENTRY e {
  x = f32[6,4] parameter(0)
  u = f32[2,4] parameter(1)
  i = s32[] parameter(2)
  z = s32[] constant(0)
  t = f32[6,4] negate(x)
  ROOT d = f32[6,4] dynamic-update-slice(t, u, i, z)
})";
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  CpuBackend cpu;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, CompileOptions()));
  EXPECT_EQ(ProgramOf(*executable).statistics.in_place_updates, 1);
  testing::ExpectMatchesInterpreter(text);
  // Clamped start index: the update lands on the last rows.
  std::vector<Literal> arguments = testing::RandomArguments(*module);
  arguments[2] = Literal::Scalar<int32_t>(17);
  interpreter::InterpreterBackend reference;
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> got, testing::RunOn(cpu, *module, arguments));
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, testing::RunOn(reference, *module, arguments));
  EXPECT_EQ(got[0], want[0]);
}

TEST(RuntimeBufferAssignmentTest, DynamicUpdateSliceCopiesWhenTheOperandIsStillNeeded) {
  const char* text = R"(HloModule m
ENTRY e {
  x = f32[6] parameter(0)
  u = f32[2] parameter(1)
  i = s32[] parameter(2)
  t = f32[6] negate(x)
  d = f32[6] dynamic-update-slice(t, u, i)
  ROOT s = f32[6] add(d, t)
})";
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  CpuBackend cpu;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, CompileOptions()));
  EXPECT_EQ(ProgramOf(*executable).statistics.in_place_updates, 0);
  testing::ExpectMatchesInterpreter(text);
}

TEST(RuntimeBufferAssignmentTest, ParametersAreNeverUpdatedInPlace) {
  const char* text = R"(HloModule m
ENTRY e {
  x = f32[6] parameter(0)
  u = f32[2] parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[6] dynamic-update-slice(x, u, i)
})";
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  CpuBackend cpu;
  const std::vector<Literal> arguments = testing::RandomArguments(*module);
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, CompileOptions()));
  EXPECT_EQ(ProgramOf(*executable).statistics.in_place_updates, 0);
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<DeviceBuffer> x, cpu.BufferFromLiteral(arguments[0], nullptr));
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<DeviceBuffer> u, cpu.BufferFromLiteral(arguments[1], nullptr));
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<DeviceBuffer> i, cpu.BufferFromLiteral(arguments[2], nullptr));
  std::vector<DeviceBuffer*> buffers = {x.get(), u.get(), i.get()};
  KILN_ASSERT_OK(executable->Execute(buffers, ExecuteOptions()).status());
  KILN_ASSERT_OK_AND_ASSIGN(Literal after, x->ToLiteral());
  EXPECT_EQ(after, arguments[0]);
}

TEST(RuntimeBufferAssignmentTest, ChainOfTemporariesReusesTheArena) {
  const char* text = R"(HloModule m
ENTRY e {
  x = f32[64,64] parameter(0)
  y = f32[64,64] parameter(1)
  a = f32[64,64] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b = f32[64,64] dot(a, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[64,64] dot(b, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d = f32[64,64] dot(c, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT e = f32[64,64] dot(d, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  CpuBackend cpu;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, CompileOptions()));
  const CompiledProgram& program = ProgramOf(*executable);
  // Four temporaries of 16 KiB, two live at a time; the root goes straight
  // into the result buffer.
  EXPECT_EQ(program.statistics.arena_bytes_without_reuse, 4 * 64 * 64 * 4);
  EXPECT_EQ(program.arena_bytes, 2 * 64 * 64 * 4);
  EXPECT_EQ(program.slots[static_cast<size_t>(program.result_sources[0])].kind, SlotKind::kResult);
  testing::ExpectMatchesInterpreter(text, 1e-2);
}

TEST(RuntimeBufferAssignmentTest, SameArrayReturnedTwiceIsCopied) {
  testing::ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  n = f32[3] negate(x)
  ROOT t = (f32[3], f32[3], f32[3]) tuple(n, n, x)
})");
}

}  // namespace
}  // namespace kiln::cpu
