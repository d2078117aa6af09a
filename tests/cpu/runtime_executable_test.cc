// The backend and executable around the thunks: devices, buffers, argument
// checking, the program cache, infeed/outfeed and the generic library path
// (concurrency: runtime_concurrency_test.cc).
#include "backends/cpu/cpu_buffer.h"
#include "backends/cpu/cpu_executable.h"
#include "core/single_instruction.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

constexpr char kSmallModule[] = R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  s = f32[4] add(x, y)
  ROOT m = f32[4] multiply(s, x)
})";

TEST(RuntimeExecutableTest, OneHostDeviceAndAlignedBuffers) {
  CpuBackend cpu;
  ASSERT_EQ(cpu.devices().size(), 1u);
  EXPECT_EQ(cpu.devices()[0]->description().rfind("cpu:0 (", 0), 0u);
  EXPECT_EQ(cpu.name(), "cpu");
  EXPECT_TRUE(cpu.SupportsElementType(ElementType::kBF16));
  EXPECT_TRUE(cpu.SupportsElementType(ElementType::kC128));
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<DeviceBuffer> buffer,
                            cpu.BufferFromLiteral(Literal::FromVector<float>({1, 2, 3}), nullptr));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(static_cast<CpuBuffer*>(buffer.get())->data()) % 64, 0u);
  KILN_ASSERT_OK_AND_ASSIGN(Literal back, buffer->ToLiteral());
  EXPECT_EQ(back, Literal::FromVector<float>({1, 2, 3}));
}

TEST(RuntimeExecutableTest, SendAndRecvAreNamedAsUnsupported) {
  std::unique_ptr<Module> module = testing::ParseOrDie(R"(HloModule m
ENTRY e {
  t = token[] after-all()
  r = (f32[2], u32[], token[]) recv(t), channel_id=1
  d = (f32[2], token[]) recv-done(r), channel_id=1
  ROOT x = f32[2] get-tuple-element(d), index=0
})");
  ASSERT_NE(module, nullptr);
  CpuBackend cpu;
  EXPECT_EQ(cpu.UnsupportedOps(*module), (std::vector<std::string>{"recv", "recv-done"}));
  StatusOr<std::unique_ptr<Executable>> executable = cpu.Compile(*module, CompileOptions());
  ASSERT_FALSE(executable.ok());
  EXPECT_EQ(executable.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(executable.status().message().find("recv"), std::string::npos);
}

TEST(RuntimeExecutableTest, WrongArgumentCountAndShapeAreInvalidArguments) {
  std::unique_ptr<Module> module = testing::ParseOrDie(kSmallModule);
  ASSERT_NE(module, nullptr);
  CpuBackend cpu;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, CompileOptions()));
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<DeviceBuffer> good,
                            cpu.BufferFromLiteral(Literal::FromVector<float>({1, 2, 3, 4}), nullptr));
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<DeviceBuffer> bad,
                            cpu.BufferFromLiteral(Literal::FromVector<float>({1, 2, 3}), nullptr));
  std::vector<DeviceBuffer*> one = {good.get()};
  StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> result = executable->Execute(one, ExecuteOptions());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("2 argument buffers, got 1"), std::string::npos)
      << result.status().message();

  std::vector<DeviceBuffer*> mismatched = {good.get(), bad.get()};
  result = executable->Execute(mismatched, ExecuteOptions());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("parameter 1 expects f32[4], got f32[3]"), std::string::npos)
      << result.status().message();

  std::vector<DeviceBuffer*> null = {good.get(), nullptr};
  result = executable->Execute(null, ExecuteOptions());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
}

TEST(RuntimeExecutableTest, CompilingTheSameModuleTwiceReturnsTheCachedProgram) {
  std::unique_ptr<Module> module = testing::ParseOrDie(kSmallModule);
  std::unique_ptr<Module> same = testing::ParseOrDie(kSmallModule);
  ASSERT_NE(module, nullptr);
  CpuBackend cpu;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> first, cpu.Compile(*module, CompileOptions()));
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> second, cpu.Compile(*same, CompileOptions()));
  EXPECT_EQ(&static_cast<CpuExecutable&>(*first).program(), &static_cast<CpuExecutable&>(*second).program());
  CompileOptions other;
  other.optimization_level = 0;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> third, cpu.Compile(*module, other));
  EXPECT_NE(&static_cast<CpuExecutable&>(*first).program(), &static_cast<CpuExecutable&>(*third).program());
}

// The program cache belongs to the process: a second backend (a second
// client) reuses what the first compiled, also after the first is gone, and
// the shared program runs on the second backend's own buffers.
TEST(RuntimeExecutableTest, BackendsShareCompiledProgramsAcrossTheirLifetimes) {
  std::unique_ptr<Module> module = testing::ParseOrDie(kSmallModule);
  ASSERT_NE(module, nullptr);
  const CompiledProgram* first_program = nullptr;
  std::unique_ptr<Executable> first;
  {
    CpuBackend earlier;
    KILN_ASSERT_OK_AND_ASSIGN(first, earlier.Compile(*module, CompileOptions()));
    first_program = &static_cast<CpuExecutable&>(*first).program();
  }
  CpuBackend later;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> second, later.Compile(*module, CompileOptions()));
  EXPECT_EQ(&static_cast<CpuExecutable&>(*second).program(), first_program);
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<DeviceBuffer> x,
                            later.BufferFromLiteral(Literal::FromVector<float>({1, 2, 3, 4}), nullptr));
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<DeviceBuffer> y,
                            later.BufferFromLiteral(Literal::FromVector<float>({10, 20, 30, 40}), nullptr));
  std::vector<DeviceBuffer*> arguments = {x.get(), y.get()};
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<std::unique_ptr<DeviceBuffer>> results,
                            second->Execute(arguments, ExecuteOptions()));
  ASSERT_EQ(results.size(), 1u);
  KILN_ASSERT_OK_AND_ASSIGN(Literal out, results[0]->ToLiteral());
  EXPECT_EQ(out, Literal::FromVector<float>({11, 44, 99, 176}));
}

TEST(RuntimeExecutableTest, InfeedAndOutfeedUseTheBackendQueues) {
  std::unique_ptr<Module> module = testing::ParseOrDie(R"(HloModule m
ENTRY e {
  t = token[] after-all()
  in = (f32[3], token[]) infeed(t)
  x = f32[3] get-tuple-element(in), index=0
  y = f32[3] add(x, x)
  t2 = token[] get-tuple-element(in), index=1
  o = token[] outfeed(y, t2)
  ROOT r = f32[3] negate(x)
})");
  ASSERT_NE(module, nullptr);
  CpuBackend cpu;
  KILN_ASSERT_OK(cpu.TransferToInfeed(Literal::FromVector<float>({1, 2, 3})));
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> got, testing::RunOn(cpu, *module, {}));
  EXPECT_EQ(got[0], Literal::FromVector<float>({-1, -2, -3}));
  KILN_ASSERT_OK_AND_ASSIGN(Literal fed, cpu.TransferFromOutfeed());
  EXPECT_EQ(fed, Literal::FromVector<float>({2, 4, 6}));
  EXPECT_EQ(cpu.TransferFromOutfeed().status().code(), StatusCode::kFailedPrecondition);
}

TEST(RuntimeExecutableTest, LibraryPathRunsSortGatherAndTupleConstants) {
  testing::ExpectMatchesInterpreter(R"(HloModule m
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = f32[8] parameter(0)
  s = f32[8] sort(x), dimensions={0}, to_apply=less
  c = (f32[2], s32[]) constant(({1.5, 2.5}, 7))
  v = f32[2] get-tuple-element(c), index=0
  k = s32[] get-tuple-element(c), index=1
  ROOT t = (f32[8], f32[2], s32[]) tuple(s, v, k)
})",
                                    0);
}

// An instruction that is no kernel and that no thunk of its own runs (a
// batch norm, left whole at optimisation level 0) runs through the
// interpreter as the computation the step lowering built to ask the code
// generator: one computation for it, not a second made by the translation.
TEST(RuntimeExecutableTest, TheLibraryPathBuildsOneComputationPerInstruction) {
  std::unique_ptr<Module> module = testing::ParseOrDie(R"(HloModule library_path_once
ENTRY e {
  x = f32[2,3] parameter(0)
  scale = f32[3] parameter(1)
  offset = f32[3] parameter(2)
  mean = f32[3] parameter(3)
  variance = f32[3] parameter(4)
  ROOT bn = f32[2,3] batch-norm-inference(x, scale, offset, mean, variance), epsilon=0.001, feature_index=1
})");
  ASSERT_NE(module, nullptr);
  CpuBackend cpu;
  CompileOptions options;
  options.optimization_level = 0;
  const int64_t before = SingleInstructionComputationsBuilt();
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, options));
  EXPECT_EQ(SingleInstructionComputationsBuilt() - before, 1);
  const CompiledProgram& program = static_cast<const CpuExecutable&>(*executable).program();
  EXPECT_EQ(program.statistics.thunks.at("library"), 1);
  int singles = 0;
  for (const auto& computation : program.module->computations())
    singles += computation->name() == "bn.single";
  EXPECT_EQ(singles, 1);
  // It computes what the interpreter does.
  std::vector<Literal> arguments;
  arguments.push_back(Literal::FromVector<float>({1, -2, 3, 0.5f, 4, -1}, {2, 3}));
  arguments.push_back(Literal::FromVector<float>({1, 2, 0.5f}));
  arguments.push_back(Literal::FromVector<float>({0, 1, -1}));
  arguments.push_back(Literal::FromVector<float>({0.5f, -1, 2}));
  arguments.push_back(Literal::FromVector<float>({1, 4, 0.25f}));  // variances
  interpreter::InterpreterBackend reference;
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, testing::RunOn(reference, *module, arguments));
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> got, testing::RunExecutable(cpu, *executable, arguments));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], want[0]);
}

}  // namespace
}  // namespace kiln::cpu
