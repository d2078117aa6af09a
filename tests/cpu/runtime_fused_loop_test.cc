// While loops compiled whole on the CPU backend (backends/cpu/codegen/
// fused_loop.h): a loop whose condition and body are a few small kernels
// runs as one function, its results equal the interpreter's whatever the
// trip count and state types, it still stops at a deadline or a
// cancellation, and a loop with anything else in it runs as before.
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "backends/cpu/control_flow_thunks.h"
#include "backends/cpu/cpu_executable.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

using testing::ExpectMatchesInterpreter;
using testing::ParseOrDie;

std::string WithTrips(std::string text, int trips) {
  for (size_t at = text.find("$N"); at != std::string::npos; at = text.find("$N")) {
    text.replace(at, 2, std::to_string(trips));
  }
  return text;
}

// A counter, a second counter stepped by the body, and state of several
// element types: f32[4], f64[3], s64[], u8[5], pred[].
constexpr char kSmallLoop[] = R"(HloModule m
cond {
  s = (s32[], s32[], f32[4], f64[3], s64[], u8[5], pred[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant($N)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[], f32[4], f64[3], s64[], u8[5], pred[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  k = s32[] get-tuple-element(s), index=1
  x = f32[4] get-tuple-element(s), index=2
  y = f64[3] get-tuple-element(s), index=3
  z = s64[] get-tuple-element(s), index=4
  u = u8[5] get-tuple-element(s), index=5
  p = pred[] get-tuple-element(s), index=6
  one = s32[] constant(1)
  j = s32[] add(i, one)
  three = s32[] constant(3)
  k2 = s32[] add(k, three)
  a = f32[] constant(0.999)
  as = f32[4] broadcast(a), dimensions={}
  c = f32[] constant(0.001)
  cs = f32[4] broadcast(c), dimensions={}
  xa = f32[4] multiply(x, as)
  x2 = f32[4] add(xa, cs)
  h = f64[] constant(0.5)
  hs = f64[3] broadcast(h), dimensions={}
  y2 = f64[3] multiply(y, hs)
  y3 = f64[3] add(y2, hs)
  iz = s64[] convert(i)
  z2 = s64[] add(z, iz)
  seven = u8[] constant(7)
  sevens = u8[5] broadcast(seven), dimensions={}
  u2 = u8[5] add(u, sevens)
  p2 = pred[] not(p)
  ROOT t = (s32[], s32[], f32[4], f64[3], s64[], u8[5], pred[]) tuple(j, k2, x2, y3, z2, u2, p2)
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f64[3] parameter(1)
  u = u8[5] parameter(2)
  zero = s32[] constant(0)
  z = s64[] constant(5)
  p = pred[] constant(true)
  init = (s32[], s32[], f32[4], f64[3], s64[], u8[5], pred[]) tuple(zero, zero, x, y, z, u, p)
  ROOT loop = (s32[], s32[], f32[4], f64[3], s64[], u8[5], pred[]) while(init), condition=cond, body=body
})";

// The same kind of loop with a dot in its body: not a fused kernel, so the
// loop is not compiled whole.
constexpr char kLoopWithDot[] = R"(HloModule m
cond {
  s = (s32[], f32[4,4], f32[4,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant($N)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4,4], f32[4,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  a = f32[4,4] get-tuple-element(s), index=1
  w = f32[4,4] get-tuple-element(s), index=2
  one = s32[] constant(1)
  j = s32[] add(i, one)
  d = f32[4,4] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  q = f32[] constant(0.25)
  qs = f32[4,4] broadcast(q), dimensions={}
  a2 = f32[4,4] multiply(d, qs)
  ROOT t = (s32[], f32[4,4], f32[4,4]) tuple(j, a2, w)
}
ENTRY e {
  a = f32[4,4] parameter(0)
  w = f32[4,4] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[4,4], f32[4,4]) tuple(zero, a, w)
  ROOT loop = (s32[], f32[4,4], f32[4,4]) while(init), condition=cond, body=body
})";

// Never ends: only a deadline or a cancellation stops it.
constexpr char kEndlessLoop[] = R"(HloModule m
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  z = s32[] constant(-1)
  ROOT ne = pred[] compare(i, z), direction=NE
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  big = s32[] constant(1000000)
  k = s32[] remainder(j, big)
  h = f32[] constant(0.5)
  hs = f32[4] broadcast(h), dimensions={}
  x2 = f32[4] multiply(x, hs)
  ROOT t = (s32[], f32[4]) tuple(k, x2)
}
ENTRY e {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, x)
  ROOT loop = (s32[], f32[4]) while(init), condition=cond, body=body
})";

// A compiled program and its entry's first while loop.
struct CompiledLoop {
  std::unique_ptr<Module> module;
  std::unique_ptr<Executable> executable;
  const WhileThunk* loop = nullptr;
  const CompiledProgram* program = nullptr;
};

CompiledLoop CompileLoop(CpuBackend& cpu, const std::string& text) {
  CompiledLoop compiled;
  compiled.module = ParseOrDie(text);
  if (compiled.module == nullptr) return compiled;
  StatusOr<std::unique_ptr<Executable>> executable = cpu.Compile(*compiled.module, CompileOptions());
  EXPECT_TRUE(executable.ok()) << executable.status().ToString();
  if (!executable.ok()) return compiled;
  compiled.executable = std::move(executable).value();
  compiled.program = &static_cast<const CpuExecutable&>(*compiled.executable).program();
  for (const auto& thunk : compiled.program->sequences.front().thunks) {
    if (const auto* loop = dynamic_cast<const WhileThunk*>(thunk.get())) {
      compiled.loop = loop;
      break;
    }
  }
  EXPECT_NE(compiled.loop, nullptr) << "no while thunk in the entry";
  return compiled;
}

// Runs `compiled` once with `arguments` and `options`; its results.
StatusOr<std::vector<Literal>> RunOnce(CpuBackend& cpu, const CompiledLoop& compiled,
                                       const std::vector<Literal>& arguments, const ExecuteOptions& options) {
  return testing::RunExecutable(cpu, *compiled.executable, arguments, options);
}

TEST(RuntimeFusedLoopTest, MatchesTheInterpreterForEveryTripCount) {
  for (int trips : {0, 1, 2, 3, 4, 7, 256, 257, 1000}) {
    SCOPED_TRACE("trips " + std::to_string(trips));
    ExpectMatchesInterpreter(WithTrips(kSmallLoop, trips), 1e-5);
  }
}

TEST(RuntimeFusedLoopTest, SmallLoopRunsAsOneFunction) {
  CpuBackend cpu;
  CompiledLoop compiled = CompileLoop(cpu, WithTrips(kSmallLoop, 1000));
  ASSERT_NE(compiled.loop, nullptr);
  EXPECT_EQ(compiled.program->statistics.fused_loops, 1);
  ASSERT_TRUE(compiled.loop->RunsFused());
  const std::vector<Literal> arguments = testing::RandomArguments(*compiled.module);
  // Identical modules share one compiled program (and its counter) within
  // the process, so the test counts from what it finds.
  const int64_t before = compiled.loop->fused_calls();
  // Without a way to stop, 1000 trips are one call of the loop's function
  // (the kernels of the condition and the body run inside it).
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> whole, RunOnce(cpu, compiled, arguments, {}));
  EXPECT_EQ(compiled.loop->fused_calls() - before, 1);
  ASSERT_TRUE(RunOnce(cpu, compiled, arguments, {}).ok());
  EXPECT_EQ(compiled.loop->fused_calls() - before, 2);
  // With a deadline it returns every kFusedTripsPerStopCheck trips to
  // check it: 1000 trips are 3 full calls and the one that ends the loop.
  ExecuteOptions far_deadline;
  far_deadline.stop = StopCondition(nullptr, StopCondition::Clock::now() + std::chrono::hours(1));
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> in_pieces, RunOnce(cpu, compiled, arguments, far_deadline));
  static_assert(WhileThunk::kFusedTripsPerStopCheck == 256);
  EXPECT_EQ(compiled.loop->fused_calls() - before, 2 + 4);
  // Each call goes on from the trip kind the last one stopped at: the same
  // results.
  ASSERT_EQ(in_pieces.size(), whole.size());
  for (size_t r = 0; r < whole.size(); ++r) {
    const auto got = in_pieces[r].raw();
    const auto want = whole[r].raw();
    EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin(), want.end())) << "result " << r;
  }
}

TEST(RuntimeFusedLoopTest, LoopWithADotRunsThunkByThunk) {
  for (int trips : {0, 1, 5}) {
    SCOPED_TRACE("trips " + std::to_string(trips));
    ExpectMatchesInterpreter(WithTrips(kLoopWithDot, trips), 1e-4);
  }
  CpuBackend cpu;
  CompiledLoop compiled = CompileLoop(cpu, WithTrips(kLoopWithDot, 5));
  ASSERT_NE(compiled.loop, nullptr);
  EXPECT_EQ(compiled.program->statistics.fused_loops, 0);
  EXPECT_FALSE(compiled.loop->RunsFused());
  ASSERT_TRUE(RunOnce(cpu, compiled, testing::RandomArguments(*compiled.module), {}).ok());
  EXPECT_EQ(compiled.loop->fused_calls(), 0);  // never set: the loop has no compiled function
}

TEST(RuntimeFusedLoopTest, EndlessFusedLoopStopsAtItsDeadline) {
  CpuBackend cpu;
  CompiledLoop compiled = CompileLoop(cpu, kEndlessLoop);
  ASSERT_NE(compiled.loop, nullptr);
  ASSERT_TRUE(compiled.loop->RunsFused());
  const int64_t before = compiled.loop->fused_calls();
  ExecuteOptions options;
  options.stop = StopCondition(nullptr, StopCondition::Clock::now() + std::chrono::milliseconds(50));
  const Status status = RunOnce(cpu, compiled, testing::RandomArguments(*compiled.module), options).status();
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded) << status.ToString();
  EXPECT_NE(status.message().find("iterations"), std::string::npos) << status.ToString();
  EXPECT_GT(compiled.loop->fused_calls() - before, 1);  // stopped from inside the loop, between two calls
}

TEST(RuntimeFusedLoopTest, EndlessFusedLoopStopsWhenCancelled) {
  CpuBackend cpu;
  CompiledLoop compiled = CompileLoop(cpu, kEndlessLoop);
  ASSERT_NE(compiled.loop, nullptr);
  ASSERT_TRUE(compiled.loop->RunsFused());
  const int64_t before = compiled.loop->fused_calls();
  auto flag = std::make_shared<CancellationFlag>();
  ExecuteOptions options;
  options.stop = StopCondition(flag, StopCondition::Clock::time_point::max());
  // Raised while the loop runs, so the loop's own checks must see it.
  std::thread canceller([flag] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    flag->Cancel();
  });
  const Status status = RunOnce(cpu, compiled, testing::RandomArguments(*compiled.module), options).status();
  canceller.join();
  EXPECT_EQ(status.code(), StatusCode::kCancelled) << status.ToString();
  EXPECT_NE(status.message().find("iterations"), std::string::npos) << status.ToString();
  EXPECT_GT(compiled.loop->fused_calls() - before, 1);
}

}  // namespace
}  // namespace kiln::cpu
