// A while loop's state on the CPU backend: leaves the body computes are
// written straight into the loop's other state buffer (no copy at the
// back-edge), leaves it takes from elsewhere are copied, and every form
// agrees with the interpreter. The copied bytes are a compile statistic so
// a copy that comes back shows here.
#include <string>

#include "backends/cpu/cpu_executable.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

using testing::ExpectMatchesInterpreter;

int64_t BytesCopiedPerIteration(const std::string& text) {
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  EXPECT_NE(module, nullptr);
  if (module == nullptr) return -1;
  CpuBackend cpu;
  StatusOr<std::unique_ptr<Executable>> executable = cpu.Compile(*module, CompileOptions());
  EXPECT_TRUE(executable.ok()) << executable.status().ToString();
  if (!executable.ok()) return -1;
  return static_cast<const CpuExecutable&>(**executable)
      .program()
      .statistics.loop_state_bytes_copied_per_iteration;
}

// The body reads the old `a` (reversed, so not element for element) after the
// new `a` is computed, and the new `b` is the old `a`: the old state must
// survive until the body ends.
constexpr char kReadsOldStateAfterWritingNew[] = R"(HloModule m
cond {
  s = (s32[], f32[64], f32[64], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(7)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[64], f32[64], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  a = f32[64] get-tuple-element(s), index=1
  b = f32[64] get-tuple-element(s), index=2
  c = f32[64] get-tuple-element(s), index=3
  one = s32[] constant(1)
  j = s32[] add(i, one)
  half = f32[] constant(0.5)
  halves = f32[64] broadcast(half), dimensions={}
  ra = f32[64] reverse(a), dimensions={0}
  a2 = f32[64] add(ra, b)
  a3 = f32[64] multiply(a2, halves)
  ra3 = f32[64] reverse(a3), dimensions={0}
  c2 = f32[64] add(ra3, a)
  c3 = f32[64] add(c2, c)
  ROOT t = (s32[], f32[64], f32[64], f32[64]) tuple(j, a3, a, c3)
}
ENTRY e {
  a = f32[64] parameter(0)
  b = f32[64] parameter(1)
  c = f32[64] parameter(2)
  zero = s32[] constant(0)
  init = (s32[], f32[64], f32[64], f32[64]) tuple(zero, a, b, c)
  ROOT loop = (s32[], f32[64], f32[64], f32[64]) while(init), condition=cond, body=body
})";

TEST(RuntimeWhileStateTest, BodyReadsOldStateAfterComputingTheNew) {
  ExpectMatchesInterpreter(kReadsOldStateAfterWritingNew, 1e-5);
  // Only `b`, taken from the old `a`, is copied.
  EXPECT_EQ(BytesCopiedPerIteration(kReadsOldStateAfterWritingNew), 64 * 4);
}

constexpr char kPassesStateThrough[] = R"(HloModule m
cond {
  s = (s32[], f32[16], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(9)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[16], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  k = f32[16] get-tuple-element(s), index=1
  x = f32[16] get-tuple-element(s), index=2
  one = s32[] constant(1)
  j = s32[] add(i, one)
  kx = f32[16] multiply(k, x)
  c = f32[] constant(0.25)
  cs = f32[16] broadcast(c), dimensions={}
  x2 = f32[16] add(kx, cs)
  ROOT t = (s32[], f32[16], f32[16]) tuple(j, k, x2)
}
ENTRY e {
  k = f32[16] parameter(0)
  x = f32[16] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[16], f32[16]) tuple(zero, k, x)
  ROOT loop = (s32[], f32[16], f32[16]) while(init), condition=cond, body=body
})";

TEST(RuntimeWhileStateTest, StatePassedThroughAndComputedIsNeverCopied) {
  ExpectMatchesInterpreter(kPassesStateThrough, 1e-5);
  EXPECT_EQ(BytesCopiedPerIteration(kPassesStateThrough), 0);
}

// The same computed array twice in the state: the first leaf is computed in
// place, the second copied from it.
constexpr char kRepeatedLeaves[] = R"(HloModule m
cond {
  s = (s32[], f32[8], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[8], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  a = f32[8] get-tuple-element(s), index=1
  b = f32[8] get-tuple-element(s), index=2
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ab = f32[8] multiply(a, b)
  y = f32[8] add(ab, a)
  ROOT t = (s32[], f32[8], f32[8]) tuple(j, y, y)
}
ENTRY e {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[8], f32[8]) tuple(zero, a, b)
  ROOT loop = (s32[], f32[8], f32[8]) while(init), condition=cond, body=body
})";

TEST(RuntimeWhileStateTest, RepeatedLeafIsComputedOnceAndCopiedOnce) {
  ExpectMatchesInterpreter(kRepeatedLeaves, 1e-5);
  EXPECT_EQ(BytesCopiedPerIteration(kRepeatedLeaves), 8 * 4);
}

// An inner loop's result is the outer state: the inner loop's own state is
// computed in place, the outer leaf copied from wherever the inner loop ended.
constexpr char kNestedLoops[] = R"(HloModule m
inner_cond {
  s = (s32[], f32[32]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
inner_body {
  s = (s32[], f32[32]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[32] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  h = f32[] constant(0.5)
  hs = f32[32] broadcast(h), dimensions={}
  xh = f32[32] multiply(x, hs)
  rx = f32[32] reverse(x), dimensions={0}
  x2 = f32[32] add(xh, rx)
  ROOT t = (s32[], f32[32]) tuple(j, x2)
}
outer_cond {
  s = (s32[], f32[32]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
outer_body {
  s = (s32[], f32[32]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[32] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  zero = s32[] constant(0)
  inner_init = (s32[], f32[32]) tuple(zero, x)
  inner = (s32[], f32[32]) while(inner_init), condition=inner_cond, body=inner_body
  y = f32[32] get-tuple-element(inner), index=1
  ROOT t = (s32[], f32[32]) tuple(j, y)
}
ENTRY e {
  x = f32[32] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[32]) tuple(zero, x)
  ROOT loop = (s32[], f32[32]) while(init), condition=outer_cond, body=outer_body
})";

TEST(RuntimeWhileStateTest, NestedLoops) {
  ExpectMatchesInterpreter(kNestedLoops, 1e-4);
  EXPECT_EQ(BytesCopiedPerIteration(kNestedLoops), 32 * 4);
}

// A scan's accumulator updated by dynamic-update-slice and a state leaf
// chosen by a conditional: both write the next state from the body.
constexpr char kUpdateAndBranchInTheBody[] = R"(HloModule m
neg {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}
twice {
  x = f32[4] parameter(0)
  ROOT d = f32[4] add(x, x)
}
cond {
  s = (s32[], f32[4], f32[6,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(6)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4], f32[6,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  acc = f32[6,4] get-tuple-element(s), index=2
  one = s32[] constant(1)
  j = s32[] add(i, one)
  two = s32[] constant(2)
  r = s32[] remainder(i, two)
  zero = s32[] constant(0)
  even = pred[] compare(r, zero), direction=EQ
  x2 = f32[4] conditional(even, x, x), true_computation=neg, false_computation=twice
  row = f32[1,4] reshape(x2)
  acc2 = f32[6,4] dynamic-update-slice(acc, row, i, zero)
  ROOT t = (s32[], f32[4], f32[6,4]) tuple(j, x2, acc2)
}
ENTRY e {
  x = f32[4] parameter(0)
  acc = f32[6,4] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[4], f32[6,4]) tuple(zero, x, acc)
  ROOT loop = (s32[], f32[4], f32[6,4]) while(init), condition=cond, body=body
})";

TEST(RuntimeWhileStateTest, UpdateAndBranchWriteTheNextState) {
  ExpectMatchesInterpreter(kUpdateAndBranchInTheBody, 1e-6);
  EXPECT_EQ(BytesCopiedPerIteration(kUpdateAndBranchInTheBody), 0);
}

// Loops one after another: each starts from the previous loop's result
// where it lies, so that loop's buffers must outlive the next loop too (the
// next loop's own state buffers may not take their place).
constexpr char kChainedLoops[] = R"(HloModule m
cond {
  s = (s32[], f32[16], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[16], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[16] get-tuple-element(s), index=1
  k = f32[16] get-tuple-element(s), index=2
  one = s32[] constant(1)
  j = s32[] add(i, one)
  rx = f32[16] reverse(x), dimensions={0}
  x2 = f32[16] add(rx, k)
  ROOT t = (s32[], f32[16], f32[16]) tuple(j, x2, k)
}
ENTRY e {
  x = f32[16] parameter(0)
  k = f32[16] parameter(1)
  zero = s32[] constant(0)
  init1 = (s32[], f32[16], f32[16]) tuple(zero, x, k)
  loop1 = (s32[], f32[16], f32[16]) while(init1), condition=cond, body=body
  y1 = f32[16] get-tuple-element(loop1), index=1
  k1 = f32[16] get-tuple-element(loop1), index=2
  k1n = f32[16] negate(k1)
  init2 = (s32[], f32[16], f32[16]) tuple(zero, y1, k1n)
  loop2 = (s32[], f32[16], f32[16]) while(init2), condition=cond, body=body
  y2 = f32[16] get-tuple-element(loop2), index=1
  k2 = f32[16] get-tuple-element(loop2), index=2
  init3 = (s32[], f32[16], f32[16]) tuple(zero, y2, k2)
  loop3 = (s32[], f32[16], f32[16]) while(init3), condition=cond, body=body
  y3 = f32[16] get-tuple-element(loop3), index=1
  ROOT out = (f32[16]) tuple(y3)
})";

TEST(RuntimeWhileStateTest, LoopsStartingFromAnotherLoopsResult) {
  ExpectMatchesInterpreter(kChainedLoops, 1e-5);
  EXPECT_EQ(BytesCopiedPerIteration(kChainedLoops), 0);
}

// Loops whose condition and body are small inline kernels and whose every
// leaf is computed in place or passed through run with their kernels' buffers
// bound once per run, in three sets (first, odd and even trip): each trip
// count below ends the loop in a different set, and the results must still
// be the interpreter's. `$N` is the trip count.
std::string WithTripCount(std::string text, int trips) {
  const std::string mark = "$N";
  for (size_t at = text.find(mark); at != std::string::npos; at = text.find(mark, at)) {
    text.replace(at, mark.size(), std::to_string(trips));
  }
  return text;
}

constexpr int kTripCounts[] = {0, 1, 2, 3, 4, 7};

// Counters and a vector computed in place; the bound and a vector passed
// through (the condition reads the bound from the state).
constexpr char kSmallKernels[] = R"(HloModule m
cond {
  s = (s32[], s32[], f32[4], f32[4], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=4
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[], f32[4], f32[4], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  c = s32[] get-tuple-element(s), index=1
  x = f32[4] get-tuple-element(s), index=2
  k = f32[4] get-tuple-element(s), index=3
  n = s32[] get-tuple-element(s), index=4
  one = s32[] constant(1)
  j = s32[] add(i, one)
  three = s32[] constant(3)
  c2 = s32[] multiply(c, three)
  r = f32[] constant(0.75)
  rs = f32[4] broadcast(r), dimensions={}
  xr = f32[4] multiply(x, rs)
  x2 = f32[4] add(xr, k)
  ROOT t = (s32[], s32[], f32[4], f32[4], s32[]) tuple(j, c2, x2, k, n)
}
ENTRY e {
  x = f32[4] parameter(0)
  k = f32[4] parameter(1)
  zero = s32[] constant(0)
  one = s32[] constant(1)
  n = s32[] constant($N)
  init = (s32[], s32[], f32[4], f32[4], s32[]) tuple(zero, one, x, k, n)
  ROOT loop = (s32[], s32[], f32[4], f32[4], s32[]) while(init), condition=cond, body=body
})";

TEST(RuntimeWhileStateTest, SmallKernelLoopEndsOnEveryKindOfTrip) {
  for (int trips : kTripCounts) {
    SCOPED_TRACE("trips " + std::to_string(trips));
    ExpectMatchesInterpreter(WithTripCount(kSmallKernels, trips), 1e-5);
  }
  EXPECT_EQ(BytesCopiedPerIteration(WithTripCount(kSmallKernels, 3)), 0);
}

// The condition is a state leaf itself (no kernel): the predicate's address
// moves between the leaf's two buffers from trip to trip.
constexpr char kPredicateInTheState[] = R"(HloModule m
cond {
  s = (pred[], s32[], f32[4]) parameter(0)
  ROOT go = pred[] get-tuple-element(s), index=0
}
body {
  s = (pred[], s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=1
  x = f32[4] get-tuple-element(s), index=2
  one = s32[] constant(1)
  j = s32[] add(i, one)
  n = s32[] constant($N)
  go = pred[] compare(j, n), direction=LT
  h = f32[] constant(0.5)
  hs = f32[4] broadcast(h), dimensions={}
  x2 = f32[4] add(x, hs)
  ROOT t = (pred[], s32[], f32[4]) tuple(go, j, x2)
}
ENTRY e {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  n = s32[] constant($N)
  go = pred[] compare(zero, n), direction=LT
  init = (pred[], s32[], f32[4]) tuple(go, zero, x)
  ROOT loop = (pred[], s32[], f32[4]) while(init), condition=cond, body=body
})";

TEST(RuntimeWhileStateTest, PredicateKeptInTheStateEndsTheLoop) {
  for (int trips : kTripCounts) {
    SCOPED_TRACE("trips " + std::to_string(trips));
    ExpectMatchesInterpreter(WithTripCount(kPredicateInTheState, trips), 1e-6);
  }
}

// More state leaves and kernels than a loop run keeps on the stack (its
// tables go to the heap): twenty vectors, each the sum of itself and the
// next, computed in place by kernels of their own.
std::string ManyLeavesLoop(int leaves) {
  std::string state = "(s32[]";
  for (int k = 0; k < leaves; ++k) state += ", f32[2]";
  state += ")";
  std::string text =
      "HloModule m\ncond {\n  s = " + state + " parameter(0)\n" +
      "  i = s32[] get-tuple-element(s), index=0\n  n = s32[] constant(5)\n" +
      "  ROOT lt = pred[] compare(i, n), direction=LT\n}\nbody {\n  s = " + state + " parameter(0)\n" +
      "  i = s32[] get-tuple-element(s), index=0\n  one = s32[] constant(1)\n  j = s32[] add(i, one)\n";
  std::string results = "j";
  for (int k = 0; k < leaves; ++k) {
    text +=
        "  x" + std::to_string(k) + " = f32[2] get-tuple-element(s), index=" + std::to_string(k + 1) + "\n";
  }
  for (int k = 0; k < leaves; ++k) {
    const std::string y = "y" + std::to_string(k);
    text +=
        "  " + y + " = f32[2] add(x" + std::to_string(k) + ", x" + std::to_string((k + 1) % leaves) + ")\n";
    results += ", " + y;
  }
  text += "  ROOT t = " + state + " tuple(" + results + ")\n}\nENTRY e {\n  zero = s32[] constant(0)\n";
  std::string init = "zero";
  for (int k = 0; k < leaves; ++k) {
    text += "  p" + std::to_string(k) + " = f32[2] parameter(" + std::to_string(k) + ")\n";
    init += ", p" + std::to_string(k);
  }
  text += "  init = " + state + " tuple(" + init + ")\n  ROOT loop = " + state +
          " while(init), condition=cond, body=body\n}\n";
  return text;
}

TEST(RuntimeWhileStateTest, LoopWithMoreLeavesThanTheStackTables) {
  const std::string text = ManyLeavesLoop(20);
  ExpectMatchesInterpreter(text, 1e-4);
  EXPECT_EQ(BytesCopiedPerIteration(text), 0);
}

}  // namespace
}  // namespace kiln::cpu
