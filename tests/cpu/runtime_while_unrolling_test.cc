// Short counted while loops (core/passes/while_unrolling.h) are unrolled on
// the CPU backend, so their trips fuse with what surrounds them (JAX's
// Threefry: five trips over the counter arrays); the results stay the
// interpreter's bit for bit. Loops whose trips are not known, or too many,
// stay loops.
#include <cstdint>
#include <optional>
#include <string>

#include "core/passes/while_unrolling.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

// A Threefry-like loop: a counter `i` from `start`, stepping by `step`,
// compared as `condition` says ("compare({i}, n), direction=LT|5": the
// compare with {i} the counter, then the constant n), over two u32 arrays
// of `elements` (80 KB by default, over the CPU's 64 KiB bound) mixed each
// trip, then xor-ed into one.
std::string CountedLoopProgram(const std::string& type, const std::string& start, const std::string& step,
                               const std::string& condition, const std::string& elements = "20000") {
  const std::string state = "(" + type + "[], u32[" + elements + "], u32[" + elements + "])";
  std::string compare = condition;
  compare.replace(compare.find("{i}"), 3, "i");
  return "HloModule m\n"
         "cond {\n  p = " +
         state + " parameter(0)\n  i = " + type + "[] get-tuple-element(p), index=0\n  n = " + type +
         "[] constant(" + compare.substr(compare.find('|') + 1) + ")\n  ROOT c = pred[] " +
         compare.substr(0, compare.find('|')) +
         "\n}\n"
         "body {\n  p = " +
         state + " parameter(0)\n  i = " + type + "[] get-tuple-element(p), index=0\n  s = " + type +
         "[] constant(" + step + ")\n  next = " + type + "[] add(i, s)\n  x = u32[" + elements +
         "] get-tuple-element(p), index=1\n  y = u32[" + elements +
         "] get-tuple-element(p), "
         "index=2\n  sum = u32[" +
         elements + "] add(x, y)\n  k = u32[] constant(13)\n  kb = u32[" + elements +
         "] broadcast(k), "
         "dimensions={}\n  r = u32[] constant(19)\n  rb = u32[" +
         elements +
         "] broadcast(r), dimensions={}\n  hi = "
         "u32[" +
         elements +
         "] "
         "shift-left(y, kb)\n  lo = u32[" +
         elements + "] shift-right-logical(y, rb)\n  rot = u32[" + elements +
         "] or(hi, lo)\n  "
         "mixed = "
         "u32[" +
         elements + "] xor(sum, rot)\n  ROOT t = " + state +
         " tuple(next, sum, mixed)\n}\n"
         "ENTRY e {\n  a = u32[" +
         elements + "] parameter(0)\n  b = u32[" + elements + "] parameter(1)\n  i0 = " + type +
         "[] constant(" + start + ")\n  init = " + state + " tuple(i0, a, b)\n  w = " + state +
         " while(init), condition=cond, body=body\n  x = u32[" + elements +
         "] get-tuple-element(w), index=1\n  y = "
         "u32[" +
         elements +
         "] "
         "get-tuple-element(w), index=2\n  ROOT z = u32[" +
         elements + "] xor(x, y)\n}\n";
}

std::optional<int64_t> TripsOf(const std::string& text) {
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  EXPECT_NE(module, nullptr);
  if (module == nullptr) return std::nullopt;
  for (const auto& instruction : module->entry()->instructions()) {
    if (instruction->opcode == Opcode::kWhile) return CountedWhileTrips(*instruction);
  }
  ADD_FAILURE() << "no while loop in " << text;
  return std::nullopt;
}

TEST(RuntimeWhileUnrollingTest, CountsTheTripsOfCountedLoops) {
  // condition "compare|limit"
  EXPECT_EQ(TripsOf(CountedLoopProgram("s32", "0", "1", "compare({i}, n), direction=LT|5")), 5);
  EXPECT_EQ(TripsOf(CountedLoopProgram("s32", "0", "1", "compare({i}, n), direction=LE|5")), 6);
  EXPECT_EQ(TripsOf(CountedLoopProgram("s32", "0", "1", "compare(n, {i}), direction=GT|10")), 10);
  EXPECT_EQ(TripsOf(CountedLoopProgram("s32", "-3", "2", "compare(n, {i}), direction=GE|4")), 4);
  EXPECT_EQ(TripsOf(CountedLoopProgram("u32", "1", "3", "compare({i}, n), direction=LT|8")), 3);
  EXPECT_EQ(TripsOf(CountedLoopProgram("s64", "7", "1", "compare({i}, n), direction=LT|7")), 0);
  EXPECT_EQ(TripsOf(CountedLoopProgram("s32", "9", "1", "compare({i}, n), direction=LT|2")), 0);
  // Not counted: the counter would wrap around (s8: 0, 100, 200 = -56, ...
  // runs 14 trips, not 2), a step that is not positive, a comparison that
  // is not an upper bound.
  EXPECT_EQ(TripsOf(CountedLoopProgram("s8", "0", "100", "compare({i}, n), direction=LT|120")), std::nullopt);
  EXPECT_EQ(TripsOf(CountedLoopProgram("s32", "0", "0", "compare({i}, n), direction=LT|5")), std::nullopt);
  EXPECT_EQ(TripsOf(CountedLoopProgram("s32", "0", "-1", "compare({i}, n), direction=LT|5")), std::nullopt);
  EXPECT_EQ(TripsOf(CountedLoopProgram("s32", "0", "1", "compare({i}, n), direction=NE|5")), std::nullopt);
  EXPECT_EQ(TripsOf(CountedLoopProgram("s32", "0", "1", "compare({i}, n), direction=GT|5")), std::nullopt);
}

TEST(RuntimeWhileUnrollingTest, AStartFromAParameterIsNotCounted) {
  std::string text = CountedLoopProgram("s32", "0", "1", "compare({i}, n), direction=LT|5");
  // The initial counter from the entry's parameter instead of a constant.
  const std::string constant = "i0 = s32[] constant(0)";
  text.replace(text.find(constant), constant.size(), "i0 = s32[] parameter(2)");
  EXPECT_EQ(TripsOf(text), std::nullopt);
}

// Runs `text` on the CPU backend (1, 2 and 4 threads) and the interpreter
// and expects the same bytes.
void ExpectTheInterpretersResults(const std::string& text) {
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  testing::ExpectSameBytesOnThreads(*module, testing::RandomArguments(*module));
}

TEST(RuntimeWhileUnrollingTest, ShortCountedLoopsFuseWithTheirConsumers) {
  // Five trips (Threefry's): no loop left, the trips and the xor after them
  // one kernel.
  const std::string text = CountedLoopProgram("s32", "0", "1", "compare({i}, n), direction=LT|5");
  EXPECT_EQ(testing::CountThunks(text, "while"), 0);
  EXPECT_EQ(testing::CountThunks(text, "kernel"), 1);
  ExpectTheInterpretersResults(text);
  // None at all: the initial state.
  const std::string none = CountedLoopProgram("s32", "4", "1", "compare({i}, n), direction=LT|2");
  EXPECT_EQ(testing::CountThunks(none, "while"), 0);
  ExpectTheInterpretersResults(none);
}

TEST(RuntimeWhileUnrollingTest, LongOrUncountedLoopsOrLoopsOverSmallArraysStayLoops) {
  const std::string long_loop = CountedLoopProgram("s32", "0", "1", "compare({i}, n), direction=LT|9");
  EXPECT_EQ(testing::CountThunks(long_loop, "while"), 1);
  ExpectTheInterpretersResults(long_loop);
  const std::string wrapping = CountedLoopProgram("s8", "0", "100", "compare({i}, n), direction=LT|120");
  EXPECT_EQ(testing::CountThunks(wrapping, "while"), 1);
  ExpectTheInterpretersResults(wrapping);
  // Five trips over 4 KB arrays: run whole as a fused loop instead.
  const std::string small = CountedLoopProgram("s32", "0", "1", "compare({i}, n), direction=LT|5", "1000");
  EXPECT_EQ(testing::CountThunks(small, "while"), 1);
  ExpectTheInterpretersResults(small);
}

}  // namespace
}  // namespace kiln::cpu
