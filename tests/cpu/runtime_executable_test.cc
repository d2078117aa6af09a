// The backend and executable around the thunks: devices, buffers, argument
// checking, concurrency, the program cache, infeed/outfeed and the generic
// library path.
#include <thread>

#include "backends/cpu/cpu_buffer.h"
#include "backends/cpu/cpu_executable.h"
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

TEST(RuntimeExecutableTest, TwoThreadsExecuteOneExecutable) {
  std::unique_ptr<Module> module = testing::ParseOrDie(R"(HloModule m
cond {
  s = (s32[], f32[16,16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(6)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[16,16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  m = f32[16,16] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  d = f32[16,16] dot(m, m), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[16,16] tanh(d)
  ROOT r = (s32[], f32[16,16]) tuple(j, t)
}
ENTRY e {
  m = f32[16,16] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[16,16]) tuple(zero, m)
  w = (s32[], f32[16,16]) while(init), condition=cond, body=body
  ROOT r = f32[16,16] get-tuple-element(w), index=1
})");
  ASSERT_NE(module, nullptr);
  CpuBackend cpu;
  interpreter::InterpreterBackend reference;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, CompileOptions()));
  std::vector<std::vector<Literal>> inputs, expected;
  for (uint64_t seed : {1, 2}) {
    inputs.push_back(testing::RandomArguments(*module, seed));
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, testing::RunOn(reference, *module, inputs.back()));
    expected.push_back(std::move(want));
  }
  std::vector<std::string> failures(2);
  auto work = [&](size_t which) {
    StatusOr<std::unique_ptr<DeviceBuffer>> argument = cpu.BufferFromLiteral(inputs[which][0], nullptr);
    if (!argument.ok()) {
      failures[which] = argument.status().ToString();
      return;
    }
    std::vector<DeviceBuffer*> buffers = {argument->get()};
    for (int round = 0; round < 50; ++round) {
      auto results = executable->Execute(buffers, ExecuteOptions());
      if (!results.ok()) {
        failures[which] = results.status().ToString();
        return;
      }
      StatusOr<Literal> got = (*results)[0]->ToLiteral();
      for (int64_t i = 0; got.ok() && i < got->element_count(); ++i) {
        if (std::fabs(got->data<float>()[i] - expected[which][0].data<float>()[i]) > 1e-4f) {
          failures[which] = "round " + std::to_string(round) + " element " + std::to_string(i) + " differs";
          return;
        }
      }
    }
  };
  std::thread a(work, 0), b(work, 1);
  a.join();
  b.join();
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");
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

}  // namespace
}  // namespace kiln::cpu
