// The steps of the shared lowering that move bytes rather than compute, as
// the cpu runs them (backends/cpu/host_step_thunks.h): infeed and outfeed
// through the backend's queues and the tapes of reverse-mode loops, each a
// thunk of its own and none through the interpreter; feeds in first-in
// first-out order inside a loop, a tape's entries popped in reverse order,
// fresh tapes for every execution, and the errors of an empty or mismatched
// infeed and of a pop without its push.
#include "backends/cpu/cpu_executable.h"
#include "backends/cpu/host_step_thunks.h"
#include "core/interpreter/interpreter_backend.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

// Adds each infeed of f32[2] to a running sum and outfeeds the sum, three
// times; the result is the last sum.
constexpr char kFeedLoop[] = R"(HloModule feed_loop
feed_cond {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  trips = s32[] constant(3)
  ROOT lt = pred[] compare(i, trips), direction=LT
}
feed_body {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = f32[2] get-tuple-element(s), index=1
  t = token[] after-all()
  in = (f32[2], token[]) infeed(t)
  d = f32[2] get-tuple-element(in), index=0
  sum = f32[2] add(acc, d)
  t2 = token[] get-tuple-element(in), index=1
  o = token[] outfeed(sum, t2)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT r = (s32[], f32[2]) tuple(next, sum)
}
ENTRY e {
  zero = s32[] constant(0)
  start = f32[2] constant({0, 0})
  init = (s32[], f32[2]) tuple(zero, start)
  w = (s32[], f32[2]) while(init), condition=feed_cond, body=feed_body
  ROOT last = f32[2] get-tuple-element(w), index=1
})";

// A forward loop pushes its state x (x <- 2x + 1) onto tape 0 five times; a
// backward loop pops the five entries and folds them as acc <- 3 acc + x, so
// the result says in which order they came back: newest first gives
// sum x_i 3^i.
constexpr char kTapeLoops[] = R"(HloModule tape_loops
forward_cond {
  s = (s32[], s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  trips = s32[] constant(5)
  ROOT lt = pred[] compare(i, trips), direction=LT
}
forward_body {
  s = (s32[], s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  x = f32[2] get-tuple-element(s), index=2
  pushed = s32[] custom-call(n, x), custom_call_target="kiln_tape_push", backend_config="0"
  one = s32[] constant(1)
  next = s32[] add(i, one)
  twice = f32[2] add(x, x)
  ones = f32[2] constant({1, 1})
  grown = f32[2] add(twice, ones)
  ROOT r = (s32[], s32[], f32[2]) tuple(next, pushed, grown)
}
backward_cond {
  s = (s32[], s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  trips = s32[] constant(5)
  ROOT lt = pred[] compare(i, trips), direction=LT
}
backward_body {
  s = (s32[], s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  acc = f32[2] get-tuple-element(s), index=2
  popped = (s32[], f32[2]) custom-call(n), custom_call_target="kiln_tape_pop", backend_config="0"
  count = s32[] get-tuple-element(popped), index=0
  x = f32[2] get-tuple-element(popped), index=1
  threes = f32[2] constant({3, 3})
  scaled = f32[2] multiply(acc, threes)
  folded = f32[2] add(scaled, x)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT r = (s32[], s32[], f32[2]) tuple(next, count, folded)
}
ENTRY e {
  x0 = f32[2] parameter(0)
  zero = s32[] constant(0)
  forward_init = (s32[], s32[], f32[2]) tuple(zero, zero, x0)
  forward = (s32[], s32[], f32[2]) while(forward_init), condition=forward_cond, body=forward_body
  n = s32[] get-tuple-element(forward), index=1
  start = f32[2] constant({0, 0})
  backward_init = (s32[], s32[], f32[2]) tuple(zero, n, start)
  backward = (s32[], s32[], f32[2]) while(backward_init), condition=backward_cond, body=backward_body
  count = s32[] get-tuple-element(backward), index=1
  acc = f32[2] get-tuple-element(backward), index=2
  ROOT out = (s32[], f32[2]) tuple(count, acc)
})";

std::unique_ptr<Executable> CompileOnCpu(CpuBackend& cpu, const std::string& text) {
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  if (module == nullptr) return nullptr;
  StatusOr<std::unique_ptr<Executable>> executable = cpu.Compile(*module, CompileOptions());
  EXPECT_TRUE(executable.ok()) << executable.status().ToString();
  return executable.ok() ? std::move(executable).value() : nullptr;
}

int64_t ThunksOfKind(const Executable& executable, const std::string& kind) {
  const auto& thunks = static_cast<const CpuExecutable&>(executable).program().statistics.thunks;
  const auto found = thunks.find(kind);
  return found == thunks.end() ? 0 : found->second;
}

TEST(RuntimeHostStepsTest, FeedsAndTapesAreThunksOfTheirOwnNotTheInterpreter) {
  CpuBackend cpu;
  std::unique_ptr<Executable> feeds = CompileOnCpu(cpu, kFeedLoop);
  ASSERT_NE(feeds, nullptr);
  EXPECT_EQ(ThunksOfKind(*feeds, "infeed"), 1);
  EXPECT_EQ(ThunksOfKind(*feeds, "outfeed"), 1);
  EXPECT_EQ(ThunksOfKind(*feeds, "library"), 0);
  std::unique_ptr<Executable> tapes = CompileOnCpu(cpu, kTapeLoops);
  ASSERT_NE(tapes, nullptr);
  EXPECT_EQ(ThunksOfKind(*tapes, "tape-push"), 1);
  EXPECT_EQ(ThunksOfKind(*tapes, "tape-pop"), 1);
  EXPECT_EQ(ThunksOfKind(*tapes, "library"), 0);
}

TEST(RuntimeHostStepsTest, FeedsInsideALoopAreFirstInFirstOut) {
  CpuBackend cpu;
  std::unique_ptr<Executable> executable = CompileOnCpu(cpu, kFeedLoop);
  ASSERT_NE(executable, nullptr);
  KILN_ASSERT_OK(cpu.TransferToInfeed(Literal::FromVector<float>({1, 2})));
  KILN_ASSERT_OK(cpu.TransferToInfeed(Literal::FromVector<float>({3, 4})));
  KILN_ASSERT_OK(cpu.TransferToInfeed(Literal::FromVector<float>({5, 6})));
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> results, testing::RunExecutable(cpu, *executable, {}));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0], Literal::FromVector<float>({9, 12}));
  for (const std::vector<float>& sum : {std::vector<float>{1, 2}, {4, 6}, {9, 12}}) {
    KILN_ASSERT_OK_AND_ASSIGN(Literal fed, cpu.TransferFromOutfeed());
    EXPECT_EQ(fed, Literal::FromVector<float>(sum));
  }
  EXPECT_EQ(cpu.TransferFromOutfeed().status().code(), StatusCode::kFailedPrecondition);
}

TEST(RuntimeHostStepsTest, AnEmptyOrMismatchedInfeedIsRefusedByName) {
  CpuBackend cpu;
  std::unique_ptr<Executable> executable = CompileOnCpu(cpu, kFeedLoop);
  ASSERT_NE(executable, nullptr);
  const Status empty = testing::RunExecutable(cpu, *executable, {}).status();
  EXPECT_EQ(empty.code(), StatusCode::kFailedPrecondition) << empty.ToString();
  EXPECT_NE(empty.message().find("cpu: infeed of f32[2] found the infeed queue empty"), std::string::npos)
      << empty.ToString();
  KILN_ASSERT_OK(cpu.TransferToInfeed(Literal::FromVector<float>({1, 2, 3})));
  const Status mismatched = testing::RunExecutable(cpu, *executable, {}).status();
  EXPECT_EQ(mismatched.code(), StatusCode::kInvalidArgument) << mismatched.ToString();
  EXPECT_NE(mismatched.message().find("infeed expects f32[2] but the queue holds f32[3]"), std::string::npos)
      << mismatched.ToString();
}

TEST(RuntimeHostStepsTest, ATapeGivesItsEntriesBackNewestFirstInEveryExecution) {
  CpuBackend cpu;
  std::unique_ptr<Executable> executable = CompileOnCpu(cpu, kTapeLoops);
  ASSERT_NE(executable, nullptr);
  // x: 1, 3, 7, 15, 31 and -2, -3, -5, -9, -17; acc = sum x_i 3^i.
  const Literal x0 = Literal::FromVector<float>({1, -2});
  const Literal want = Literal::FromVector<float>({2989, -1676});
  for (int execution = 0; execution < 2; ++execution) {
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> results, testing::RunExecutable(cpu, *executable, {x0}));
    ASSERT_EQ(results.size(), 2u);
    EXPECT_EQ(results[0], Literal::Scalar<int32_t>(0)) << "five pushes, five pops";
    EXPECT_EQ(results[1], want) << "execution " << execution;
  }
  // The interpreter agrees.
  std::unique_ptr<Module> module = testing::ParseOrDie(kTapeLoops);
  ASSERT_NE(module, nullptr);
  interpreter::InterpreterBackend reference;
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> interpreted, testing::RunOn(reference, *module, {x0}));
  ASSERT_EQ(interpreted.size(), 2u);
  EXPECT_EQ(interpreted[1], want);
}

TEST(RuntimeHostStepsTest, APopWithoutItsPushIsInternalNamingTheTape) {
  CpuBackend cpu;
  std::unique_ptr<Executable> executable = CompileOnCpu(cpu, R"(HloModule lone_pop
ENTRY e {
  n = s32[] constant(0)
  popped = (s32[], f32[2]) custom-call(n), custom_call_target="kiln_tape_pop", backend_config="4"
  ROOT x = f32[2] get-tuple-element(popped), index=1
})");
  ASSERT_NE(executable, nullptr);
  EXPECT_EQ(ThunksOfKind(*executable, "tape-pop"), 1);
  const Status status = testing::RunExecutable(cpu, *executable, {}).status();
  EXPECT_EQ(status.code(), StatusCode::kInternal) << status.ToString();
  EXPECT_NE(status.message().find("pops 8 bytes from tape 4, which holds 0"), std::string::npos)
      << status.ToString();
}

// The cpu's loops keep passed-through results where they are, so its
// lowering makes no kCopy step; the thunk that would run one copies each
// slot's bytes and leaves a slot that is its own target alone.
TEST(RuntimeHostStepsTest, ACopyStepCopiesEachSlot) {
  std::vector<float> a = {1, 2, 3}, b = {4, 5}, a_copy(3, 0), b_copy(2, 0);
  void* slots[] = {a.data(), b.data(), a_copy.data(), b_copy.data()};
  ExecutionContext context;
  context.slots = slots;
  const SlotCopyThunk copy({0, 1, 0}, {2, 3, 0}, {12, 8, 12});
  EXPECT_EQ(copy.inputs(), (std::vector<int>{0, 1, 0}));
  EXPECT_EQ(copy.outputs(), (std::vector<int>{2, 3, 0}));
  KILN_ASSERT_OK(copy.Run(context));
  EXPECT_EQ(a_copy, a);
  EXPECT_EQ(b_copy, b);
  EXPECT_EQ(a, (std::vector<float>{1, 2, 3}));
}

}  // namespace
}  // namespace kiln::cpu
