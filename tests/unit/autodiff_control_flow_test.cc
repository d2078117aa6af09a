// Gradients through conditionals (both forms, nested) and while loops with
// trip counts known only at run time (invariants, nested loops, loops in
// conditionals, conditionals in loops, zero trips): each against central
// differences and, for loops, against the gradient of the same computation
// unrolled for the trip count the forward loop ran; the tape's memory after
// N iterations; errors that name what cannot be differentiated.
#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <string>

#include "core/autodiff/vjp.h"
#include "core/hlo_parser.h"
#include "core/interpreter/evaluator.h"
#include "tests/unit/autodiff_gradient_check.h"
#include "tests/unit/control_flow_programs.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

using testing::ExpectGradientsMatchFiniteDifferences;
using testing::RandomF64;
using testing::RunLeaves;

using testing::F64;
namespace control_flow = testing::control_flow;

const std::string kAdd = control_flow::AddComputation("f64");

// Runs `module` on the interpreter.
std::vector<Literal> RunForward(const Module& module, const std::vector<Literal>& inputs) {
  StatusOr<std::unique_ptr<Backend>> backend = CreateBackend("interpreter");
  EXPECT_TRUE(backend.ok());
  StatusOr<std::unique_ptr<Executable>> executable = (*backend)->Compile(module, CompileOptions{});
  EXPECT_TRUE(executable.ok()) << executable.status().ToString();
  if (!executable.ok()) return {};
  return RunLeaves(**executable, **backend, inputs);
}

// The gradients of `looped` and of `unrolled` (the same function with its
// loops written out for the trip counts of `inputs`) agree, on the
// interpreter and on cpu, under the same random cotangents; so do their
// forward results.
void ExpectSameGradientsAsUnrolled(const Module& looped, const Module& unrolled, std::vector<int64_t> wrt,
                                   const std::vector<Literal>& inputs, uint32_t seed = 7) {
  SCOPED_TRACE(unrolled.ToString());
  KILN_ASSERT_OK_AND_ASSIGN(auto looped_vjp, autodiff::BuildVjp(looped, std::span<const int64_t>(wrt)));
  KILN_ASSERT_OK_AND_ASSIGN(auto unrolled_vjp, autodiff::BuildVjp(unrolled, std::span<const int64_t>(wrt)));
  std::vector<Literal> arguments = inputs;
  const Shape& result = looped.entry()->root()->shape;
  ASSERT_EQ(result.ToString(), unrolled.entry()->root()->shape.ToString());
  std::mt19937 random(seed);
  if (!result.IsScalar()) {
    for (const Shape& leaf : result.Leaves()) {
      arguments.push_back(leaf.element_type() == ElementType::kF64 ? RandomF64(leaf, random) : Literal(leaf));
    }
  }
  for (const char* backend_name : {"interpreter", "cpu"}) {
    SCOPED_TRACE(backend_name);
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> backend, CreateBackend(backend_name));
    KILN_ASSERT_OK_AND_ASSIGN(auto looped_executable, backend->Compile(*looped_vjp, CompileOptions{}));
    KILN_ASSERT_OK_AND_ASSIGN(auto unrolled_executable, backend->Compile(*unrolled_vjp, CompileOptions{}));
    const std::vector<Literal> got = RunLeaves(*looped_executable, *backend, arguments);
    const std::vector<Literal> want = RunLeaves(*unrolled_executable, *backend, arguments);
    ASSERT_EQ(got.size(), want.size());
    for (size_t l = 0; l < got.size(); ++l) {
      ASSERT_EQ(got[l].element_count(), want[l].element_count());
      for (int64_t i = 0; i < got[l].element_count(); ++i) {
        EXPECT_NEAR(got[l].GetAsDouble(i), want[l].GetAsDouble(i),
                    1e-10 * (1 + std::fabs(want[l].GetAsDouble(i))))
            << "leaf " << l << " element " << i;
      }
    }
  }
}

// x grows as x * a + sin(x) while |x|^2 < 100; a is loop-invariant; i counts.
const std::string kGrowComputations = control_flow::GrowComputations("f64");

std::string GrowLoop() {
  return std::string("HloModule grow\n") + kAdd + kGrowComputations + R"(
ENTRY main {
  x = f64[3] parameter(0)
  a = f64[3] parameter(1)
  zero = s32[] constant(0)
  init = (f64[3], f64[3], s32[]) tuple(x, a, zero)
  w = (f64[3], f64[3], s32[]) while(init), condition=grow_cond, body=grow_body
  rx = f64[3] get-tuple-element(w), index=0
  ra = f64[3] get-tuple-element(w), index=1
  ri = s32[] get-tuple-element(w), index=2
  ROOT out = (f64[3], f64[3], s32[]) tuple(rx, ra, ri)
}
)";
}

// The same, with the body called `trips` times instead of the loop.
std::string GrowUnrolled(int64_t trips) {
  std::ostringstream text;
  text << "HloModule grow_unrolled\n"
       << kAdd << kGrowComputations << R"(
ENTRY main {
  x = f64[3] parameter(0)
  a = f64[3] parameter(1)
  zero = s32[] constant(0)
  s0 = (f64[3], f64[3], s32[]) tuple(x, a, zero)
)";
  for (int64_t k = 1; k <= trips; ++k) {
    text << "  s" << k << " = (f64[3], f64[3], s32[]) call(s" << k - 1 << "), to_apply=grow_body\n";
  }
  text << "  rx = f64[3] get-tuple-element(s" << trips << "), index=0\n"
       << "  ra = f64[3] get-tuple-element(s" << trips << "), index=1\n"
       << "  ri = s32[] get-tuple-element(s" << trips << "), index=2\n"
       << "  ROOT out = (f64[3], f64[3], s32[]) tuple(rx, ra, ri)\n}\n";
  return text.str();
}

int32_t TripCount(const std::vector<Literal>& leaves, size_t leaf) {
  return leaves.at(leaf).data<int32_t>()[0];
}

TEST(AutodiffControlFlowTest, WhileWithADataDependentTripCount) {
  auto looped = testing::ParseHloOrFail(GrowLoop());
  ASSERT_NE(looped, nullptr);
  std::mt19937 random(31);
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<Literal> inputs = {RandomF64(F64({3}), random, 0.2, 0.6),
                                   RandomF64(F64({3}), random, 1.2, 1.5)};
    const int32_t trips = TripCount(RunForward(*looped, inputs), 2);
    SCOPED_TRACE("trip count " + std::to_string(trips));
    EXPECT_GT(trips, 3);
    ExpectGradientsMatchFiniteDifferences(*looped, {0, 1}, inputs, 5 + trial, {1e-6, 1e-6});
    auto unrolled = testing::ParseHloOrFail(GrowUnrolled(trips));
    ASSERT_NE(unrolled, nullptr);
    ExpectSameGradientsAsUnrolled(*looped, *unrolled, {0, 1}, inputs, 9 + trial);
  }
}

// No iteration: the cotangent passes straight through, the invariant's too.
TEST(AutodiffControlFlowTest, WhileThatRunsZeroTimes) {
  auto looped = testing::ParseHloOrFail(GrowLoop());
  ASSERT_NE(looped, nullptr);
  const std::vector<Literal> inputs = {Literal::FromVector<double>({8.0, -7.0, 3.0}),
                                       Literal::FromVector<double>({1.3, 1.4, 1.5})};
  ASSERT_EQ(TripCount(RunForward(*looped, inputs), 2), 0);
  ExpectGradientsMatchFiniteDifferences(*looped, {0, 1}, inputs);
  auto unrolled = testing::ParseHloOrFail(GrowUnrolled(0));
  ASSERT_NE(unrolled, nullptr);
  ExpectSameGradientsAsUnrolled(*looped, *unrolled, {1, 0}, inputs);
}

// The tape holds the changing state of each iteration (x and i: 24 + 4
// bytes; the invariant a is not saved) and grows by doubling: after N
// iterations it holds N entries in less than twice their bytes.
TEST(AutodiffControlFlowTest, TheTapeGrowsLinearlyWithTheTripCount) {
  const std::string text = std::string("HloModule drift\n") + kAdd + R"(
drift_body {
  s = (f64[3], f64[3], s32[]) parameter(0)
  x = f64[3] get-tuple-element(s), index=0
  c = f64[3] get-tuple-element(s), index=1
  i = s32[] get-tuple-element(s), index=2
  nx = f64[3] add(x, c)
  one = s32[] constant(1)
  ni = s32[] add(i, one)
  ROOT r = (f64[3], f64[3], s32[]) tuple(nx, c, ni)
}

drift_cond {
  s = (f64[3], f64[3], s32[]) parameter(0)
  x = f64[3] get-tuple-element(s), index=0
  zero = f64[] constant(0)
  n = f64[] reduce(x, zero), dimensions={0}, to_apply=add_f64
  bound = f64[] constant(30)
  ROOT lt = pred[] compare(n, bound), direction=LT
}

ENTRY main {
  x = f64[3] parameter(0)
  c = f64[3] parameter(1)
  zero = s32[] constant(0)
  init = (f64[3], f64[3], s32[]) tuple(x, c, zero)
  w = (f64[3], f64[3], s32[]) while(init), condition=drift_cond, body=drift_body
  rx = f64[3] get-tuple-element(w), index=0
  sq = f64[3] multiply(rx, rx)
  z = f64[] constant(0)
  ROOT loss = f64[] reduce(sq, z), dimensions={0}, to_apply=add_f64
}
)";
  auto module = testing::ParseHloOrFail(text);
  ASSERT_NE(module, nullptr);
  KILN_ASSERT_OK_AND_ASSIGN(auto vjp, autodiff::BuildVjp(*module, std::vector<int64_t>{0, 1}));
  const interpreter::ModulePlan plan = interpreter::ModulePlan::Build(*vjp);
  constexpr int64_t kEntryBytes = 3 * 8 + 4;
  for (double step : {1.0, 0.1, 0.01, 0.001}) {
    SCOPED_TRACE(step);
    const Literal x = Literal::FromVector<double>({0.0, 0.0, 0.0});
    const Literal c = Literal::FromVector<double>({step, step, step});
    const int64_t trips = static_cast<int64_t>(std::ceil(10.0 / step - 1e-9));
    interpreter::HostQueues queues;
    interpreter::Evaluator evaluator(plan, &queues, 0);
    const Literal* arguments[] = {&x, &c};
    KILN_ASSERT_OK_AND_ASSIGN(Literal result, evaluator.Run(*vjp->entry(), arguments));
    const interpreter::TapeStatistics& tape = evaluator.tape_statistics();
    EXPECT_GE(trips, 10);
    EXPECT_NEAR(static_cast<double>(tape.pushes), static_cast<double>(trips), 1.0);
    const int64_t entries = tape.pushes;
    // x_N = x + N c: d loss / d x = 2 x_N, d loss / d c = 2 N x_N (accumulated over the iterations).
    const double final_x = static_cast<double>(entries) * step;
    EXPECT_NEAR(result.tuple_elements()[1].GetAsDouble(0), 2 * final_x, 1e-9 * entries);
    EXPECT_NEAR(result.tuple_elements()[2].GetAsDouble(2), 2 * static_cast<double>(entries) * final_x,
                1e-9 * entries * entries);
    EXPECT_EQ(tape.peak_bytes, entries * kEntryBytes);
    EXPECT_LT(tape.peak_capacity_bytes, 2 * entries * kEntryBytes);
    EXPECT_EQ(tape.bytes, 0) << "every entry is popped";
  }
}

// An inner loop whose trip count is the outer iteration number (plus one)
// inside an outer loop that runs until x is large.
const std::string kNestedComputations = control_flow::NestedComputations("f64");

TEST(AutodiffControlFlowTest, NestedWhileLoops) {
  const std::string looped_text = control_flow::NestedLoopsModule("f64");
  auto looped = testing::ParseHloOrFail(looped_text);
  ASSERT_NE(looped, nullptr);
  std::mt19937 random(32);
  for (int trial = 0; trial < 2; ++trial) {
    std::vector<Literal> inputs = {RandomF64(F64({2}), random, 0.3, 0.8),
                                   RandomF64(F64({2}), random, 1.3, 1.6)};
    const int32_t trips = TripCount(RunForward(*looped, inputs), 1);
    SCOPED_TRACE("outer trip count " + std::to_string(trips));
    EXPECT_GT(trips, 2);
    ExpectGradientsMatchFiniteDifferences(*looped, {0, 1}, inputs, 3 + trial, {1e-6, 1e-6});
    // Unrolled: outer iteration k runs the inner body k + 1 times.
    std::ostringstream text;
    text << "HloModule nested_unrolled\n"
         << kAdd << kNestedComputations << R"(
ENTRY main {
  x0 = f64[2] parameter(0)
  a = f64[2] parameter(1)
  zero = s32[] constant(0)
)";
    for (int k = 0; k < trips; ++k) {
      text << "  limit" << k << " = s32[] constant(" << k << ")\n"
           << "  t" << k << "_0 = (f64[2], f64[2], s32[], s32[]) tuple(x" << k << ", a, zero, limit" << k
           << ")\n";
      for (int m = 1; m <= k + 1; ++m) {
        text << "  t" << k << "_" << m << " = (f64[2], f64[2], s32[], s32[]) call(t" << k << "_" << m - 1
             << "), to_apply=inner_body\n";
      }
      text << "  y" << k << " = f64[2] get-tuple-element(t" << k << "_" << k + 1 << "), index=0\n"
           << "  x" << k + 1 << " = f64[2] multiply(y" << k << ", a)\n";
    }
    text << "  n = s32[] constant(" << trips << ")\n"
         << "  ROOT out = (f64[2], s32[]) tuple(x" << trips << ", n)\n}\n";
    auto unrolled = testing::ParseHloOrFail(text.str());
    ASSERT_NE(unrolled, nullptr);
    ExpectSameGradientsAsUnrolled(*looped, *unrolled, {0, 1}, inputs, 11 + trial);
  }
}

const std::string kEvenOdd = control_flow::EvenOddComputations("f64");

// The body picks a branch by the parity of its iteration; the loop runs
// until x is large.
TEST(AutodiffControlFlowTest, ConditionalInsideAWhileLoop) {
  const std::string looped_text = control_flow::ConditionalInALoopModule("f64");
  auto looped = testing::ParseHloOrFail(looped_text);
  ASSERT_NE(looped, nullptr);
  std::mt19937 random(33);
  std::vector<Literal> inputs = {RandomF64(F64({2}), random, 0.3, 0.9),
                                 RandomF64(F64({2}), random, 0.3, 0.6)};
  const int32_t trips = TripCount(RunForward(*looped, inputs), 1);
  SCOPED_TRACE("trip count " + std::to_string(trips));
  EXPECT_GT(trips, 3);
  ExpectGradientsMatchFiniteDifferences(*looped, {0, 1}, inputs, 4, {1e-6, 1e-6});
  std::ostringstream text;
  text << "HloModule cond_in_loop_unrolled\n"
       << kAdd << kEvenOdd << R"(
ENTRY main {
  x0 = f64[2] parameter(0)
  a = f64[2] parameter(1)
)";
  for (int k = 0; k < trips; ++k) {
    text << "  p" << k << " = (f64[2], f64[2]) tuple(x" << k << ", a)\n"
         << "  x" << k + 1 << " = f64[2] call(p" << k
         << "), to_apply=" << (k % 2 == 0 ? "even_step" : "odd_step") << "\n";
  }
  text << "  n = s32[] constant(" << trips << ")\n"
       << "  ROOT out = (f64[2], s32[]) tuple(x" << trips << ", n)\n}\n";
  auto unrolled = testing::ParseHloOrFail(text.str());
  ASSERT_NE(unrolled, nullptr);
  ExpectSameGradientsAsUnrolled(*looped, *unrolled, {0, 1}, inputs);
}

// A conditional whose true branch is a loop (its operand a tuple) and whose
// false branch is straight-line code on another operand.
TEST(AutodiffControlFlowTest, WhileLoopInsideAConditional) {
  const std::string computations = control_flow::LoopInAConditionalComputations("f64");
  const std::string looped_text = control_flow::LoopInAConditionalModule("f64");
  auto looped = testing::ParseHloOrFail(looped_text);
  ASSERT_NE(looped, nullptr);
  std::mt19937 random(34);
  for (bool predicate : {true, false}) {
    SCOPED_TRACE(predicate);
    std::vector<Literal> inputs = {RandomF64(F64({3}), random, 0.2, 0.6),
                                   RandomF64(F64({3}), random, 1.2, 1.5), Literal::Scalar<bool>(predicate)};
    const int32_t trips = TripCount(RunForward(*looped, inputs), 1);
    EXPECT_EQ(trips > 3, predicate) << trips;
    ExpectGradientsMatchFiniteDifferences(*looped, {0, 1}, inputs, 6, {1e-6, 1e-6});
    std::ostringstream text;
    text << "HloModule loop_in_cond_unrolled\n"
         << computations << R"(
ENTRY main {
  x = f64[3] parameter(0)
  a = f64[3] parameter(1)
  p = pred[] parameter(2)
)";
    if (predicate) {
      text << "  zero = s32[] constant(0)\n  s0 = (f64[3], f64[3], s32[]) tuple(x, a, zero)\n";
      for (int k = 1; k <= trips; ++k) {
        text << "  s" << k << " = (f64[3], f64[3], s32[]) call(s" << k - 1 << "), to_apply=grow_body\n";
      }
      text << "  rx = f64[3] get-tuple-element(s" << trips << "), index=0\n"
           << "  ri = s32[] get-tuple-element(s" << trips << "), index=2\n"
           << "  ROOT r = (f64[3], s32[]) tuple(rx, ri)\n}\n";
    } else {
      text << "  ROOT r = (f64[3], s32[]) call(a), to_apply=straight\n}\n";
    }
    auto unrolled = testing::ParseHloOrFail(text.str());
    ASSERT_NE(unrolled, nullptr);
    ExpectSameGradientsAsUnrolled(*looped, *unrolled, {0, 1}, inputs);
  }
}

// The predicate form: both branches read both operands differently.
TEST(AutodiffControlFlowTest, ConditionalWithAPredicate) {
  const std::string text = R"(
HloModule pred_cond

on_true {
  p = (f64[2,3], f64[3]) parameter(0)
  x = f64[2,3] get-tuple-element(p), index=0
  y = f64[3] get-tuple-element(p), index=1
  yb = f64[2,3] broadcast(y), dimensions={1}
  sx = f64[2,3] sine(x)
  ROOT r = f64[2,3] multiply(sx, yb)
}

on_false {
  y = f64[3] parameter(0)
  e = f64[3] exponential(y)
  ROOT r = f64[2,3] broadcast(e), dimensions={1}
}

ENTRY main {
  x = f64[2,3] parameter(0)
  y = f64[3] parameter(1)
  p = pred[] parameter(2)
  xy = (f64[2,3], f64[3]) tuple(x, y)
  ROOT c = f64[2,3] conditional(p, xy, y), true_computation=on_true, false_computation=on_false
}
)";
  auto module = testing::ParseHloOrFail(text);
  ASSERT_NE(module, nullptr);
  std::mt19937 random(35);
  for (bool predicate : {true, false}) {
    SCOPED_TRACE(predicate);
    ExpectGradientsMatchFiniteDifferences(
        *module, {0, 1},
        {RandomF64(F64({2, 3}), random), RandomF64(F64({3}), random), Literal::Scalar<bool>(predicate)});
  }
}

// The index form with three branches, one holding a conditional of its own
// (a predicate computed from the data) and one ignoring its operand; an
// index out of range runs the last branch, as XLA does.
TEST(AutodiffControlFlowTest, IndexedAndNestedConditionals) {
  const std::string text = std::string("HloModule indexed\n") + kAdd + R"(
inner_true {
  x = f64[4] parameter(0)
  ROOT r = f64[4] multiply(x, x)
}

inner_false {
  x = f64[4] parameter(0)
  ROOT r = f64[4] cosine(x)
}

branch0 {
  p = (f64[4], f64[]) parameter(0)
  x = f64[4] get-tuple-element(p), index=0
  s = f64[] get-tuple-element(p), index=1
  sb = f64[4] broadcast(s), dimensions={}
  ROOT r = f64[4] multiply(x, sb)
}

branch1 {
  x = f64[4] parameter(0)
  zero = f64[] constant(0)
  total = f64[] reduce(x, zero), dimensions={0}, to_apply=add_f64
  positive = pred[] compare(total, zero), direction=GT
  ROOT r = f64[4] conditional(positive, x, x), true_computation=inner_true, false_computation=inner_false
}

branch2 {
  s = f64[] parameter(0)
  ROOT r = f64[4] constant({1, 2, 3, 4})
}

ENTRY main {
  x = f64[4] parameter(0)
  s = f64[] parameter(1)
  index = s32[] parameter(2)
  xs = (f64[4], f64[]) tuple(x, s)
  c = f64[4] conditional(index, xs, x, s), branch_computations={branch0, branch1, branch2}
  ROOT r = f64[4] sine(c)
}
)";
  auto module = testing::ParseHloOrFail(text);
  ASSERT_NE(module, nullptr);
  std::mt19937 random(36);
  for (int32_t index : {0, 1, 1, 2, 7, -1}) {
    SCOPED_TRACE(index);
    ExpectGradientsMatchFiniteDifferences(
        *module, {0, 1},
        {RandomF64(F64({4}), random), RandomF64(F64({}), random), Literal::Scalar<int32_t>(index)});
  }
}

// Conditionals inside conditionals inside a loop: the backward loop pops
// each iteration's state and takes the branch the forward iteration took.
TEST(AutodiffControlFlowTest, ConditionalOnTheDataInsideALoop) {
  const std::string text = std::string("HloModule data_cond_loop\n") + kAdd + R"(
grow {
  x = f64[2] parameter(0)
  two = f64[] constant(1.5)
  t = f64[2] broadcast(two), dimensions={}
  ROOT r = f64[2] multiply(x, t)
}

wiggle {
  x = f64[2] parameter(0)
  s = f64[2] sine(x)
  ROOT r = f64[2] add(x, s)
}

body {
  s = (f64[2], s32[]) parameter(0)
  x = f64[2] get-tuple-element(s), index=0
  i = s32[] get-tuple-element(s), index=1
  zero = f64[] constant(0)
  total = f64[] reduce(x, zero), dimensions={0}, to_apply=add_f64
  bar = f64[] constant(2)
  small = pred[] compare(total, bar), direction=LT
  y = f64[2] conditional(small, x, x), true_computation=grow, false_computation=wiggle
  one = s32[] constant(1)
  ni = s32[] add(i, one)
  ROOT r = (f64[2], s32[]) tuple(y, ni)
}

cond {
  s = (f64[2], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=1
  n = s32[] constant(6)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  x = f64[2] parameter(0)
  zero = s32[] constant(0)
  init = (f64[2], s32[]) tuple(x, zero)
  w = (f64[2], s32[]) while(init), condition=cond, body=body
  ROOT rx = f64[2] get-tuple-element(w), index=0
}
)";
  auto module = testing::ParseHloOrFail(text);
  ASSERT_NE(module, nullptr);
  ExpectGradientsMatchFiniteDifferences(*module, {0}, {Literal::FromVector<double>({0.2, 0.3})});
  ExpectGradientsMatchFiniteDifferences(*module, {0}, {Literal::FromVector<double>({-1.0, 0.45})});
}

std::string LoopWithBody(const std::string& step, const std::string& computations = "") {
  return "HloModule bad_body\n" + computations + R"(
body {
  s = (f64[3], s32[]) parameter(0)
  x = f64[3] get-tuple-element(s), index=0
  i = s32[] get-tuple-element(s), index=1
)" + step +
         R"(
  one = s32[] constant(1)
  ni = s32[] add(i, one)
  ROOT r = (f64[3], s32[]) tuple(y, ni)
}

cond {
  s = (f64[3], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=1
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  x = f64[3] parameter(0)
  zero = s32[] constant(0)
  init = (f64[3], s32[]) tuple(x, zero)
  w = (f64[3], s32[]) while(init), condition=cond, body=body
  ROOT rx = f64[3] get-tuple-element(w), index=0
}
)";
}

TEST(AutodiffControlFlowTest, ALoopBodyWithoutADerivativeIsNamed) {
  auto opaque =
      testing::ParseHloOrFail(LoopWithBody("  y = f64[3] custom-call(x), custom_call_target=\"my_op\""));
  ASSERT_NE(opaque, nullptr);
  const auto refused = autodiff::BuildVjp(*opaque, std::vector<int64_t>{0});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("'custom-call' is not differentiable (instruction y"),
            std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("in the body of while 'w'"), std::string::npos)
      << refused.status().message();

  // A select-and-scatter with a max scatter has no rule (nor has it in JAX).
  auto max_scatter = testing::ParseHloOrFail(LoopWithBody(R"(
  zero_f = f64[] constant(0)
  p = f64[3] select-and-scatter(x, x, zero_f), window={size=1}, select=ge_f64, scatter=max_f64
  y = f64[3] add(p, x))",
                                                          R"(
ge_f64 {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT ge = pred[] compare(a, b), direction=GE
}

max_f64 {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT larger = f64[] maximum(a, b)
}
)"));
  ASSERT_NE(max_scatter, nullptr);
  const auto not_yet = autodiff::BuildVjp(*max_scatter, std::vector<int64_t>{0});
  ASSERT_FALSE(not_yet.ok());
  EXPECT_EQ(not_yet.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(not_yet.status().message().find("'select-and-scatter'"), std::string::npos)
      << not_yet.status().message();
  EXPECT_NE(not_yet.status().message().find("(instruction p)"), std::string::npos)
      << not_yet.status().message();

  // Recomputing the body in the backward pass would draw other numbers.
  auto random = testing::ParseHloOrFail(LoopWithBody(R"(
  lo = f64[] constant(0)
  hi = f64[] constant(1)
  u = f64[3] rng(lo, hi), distribution=rng_uniform
  y = f64[3] multiply(x, u))"));
  ASSERT_NE(random, nullptr);
  const auto stateful = autodiff::BuildVjp(*random, std::vector<int64_t>{0});
  ASSERT_FALSE(stateful.ok());
  EXPECT_EQ(stateful.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(stateful.status().message().find("the body of while 'w' holds 'rng' (instruction u)"),
            std::string::npos)
      << stateful.status().message();
}

// The gradient module is HLO text like any other: it prints, parses back
// and runs; a device backend would refuse its tape custom calls by name.
TEST(AutodiffControlFlowTest, TheGradientOfALoopRoundTripsThroughText) {
  auto looped = testing::ParseHloOrFail(GrowLoop());
  ASSERT_NE(looped, nullptr);
  KILN_ASSERT_OK_AND_ASSIGN(auto vjp, autodiff::BuildVjp(*looped, std::vector<int64_t>{0, 1}));
  const std::string text = vjp->ToString();
  EXPECT_NE(text.find("custom_call_target=\"kiln_tape_push\""), std::string::npos) << text;
  EXPECT_NE(text.find("custom_call_target=\"kiln_tape_pop\""), std::string::npos) << text;
  auto reparsed = testing::ParseHloOrFail(text);
  ASSERT_NE(reparsed, nullptr);
  std::vector<Literal> inputs = {Literal::FromVector<double>({0.3, 0.4, 0.5}),
                                 Literal::FromVector<double>({1.3, 1.4, 1.2}),
                                 Literal::FromVector<double>({1, 0, 0}),
                                 Literal::FromVector<double>({0, 1, 0}), Literal::Scalar<int32_t>(0)};
  for (const char* backend : {"interpreter", "cpu"}) {
    KILN_ASSERT_OK_AND_ASSIGN(Literal first, testing::Run(*vjp, inputs, backend));
    KILN_ASSERT_OK_AND_ASSIGN(Literal second, testing::Run(*reparsed, inputs, backend));
    EXPECT_EQ(first, second) << backend;
  }
  // Differentiating the gradient through its loops again is refused.
  const auto second_order = autodiff::BuildVjp(*vjp, std::vector<int64_t>{0});
  ASSERT_FALSE(second_order.ok());
  EXPECT_EQ(second_order.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(second_order.status().message().find("tape of an earlier gradient"), std::string::npos)
      << second_order.status().message();
}

// A loop over one array (no tuple) that is the module's result, and a loop
// whose trip count is an integer parameter inside a tuple result.
TEST(AutodiffControlFlowTest, ALoopOverAnArrayThatIsTheResult) {
  const std::string text = std::string("HloModule array_loop\n") + kAdd + R"(
body {
  x = f64[3] parameter(0)
  s = f64[3] sine(x)
  c = f64[] constant(1.5)
  cb = f64[3] broadcast(c), dimensions={}
  m = f64[3] multiply(x, cb)
  ROOT r = f64[3] add(m, s)
}

cond {
  x = f64[3] parameter(0)
  zero = f64[] constant(0)
  total = f64[] reduce(x, zero), dimensions={0}, to_apply=add_f64
  bound = f64[] constant(20)
  ROOT lt = pred[] compare(total, bound), direction=LT
}

ENTRY main {
  x = f64[3] parameter(0)
  ROOT w = f64[3] while(x), condition=cond, body=body
}
)";
  auto module = testing::ParseHloOrFail(text);
  ASSERT_NE(module, nullptr);
  ExpectGradientsMatchFiniteDifferences(*module, {0}, {Literal::FromVector<double>({0.3, 0.5, 0.2})});
  ExpectGradientsMatchFiniteDifferences(*module, {0}, {Literal::FromVector<double>({10.0, 9.0, 8.0})});

  const std::string counted = std::string("HloModule counted_loop\n") + R"(
body {
  s = (s32[], f64[2,2], s32[]) parameter(0)
  n = s32[] get-tuple-element(s), index=0
  x = f64[2,2] get-tuple-element(s), index=1
  i = s32[] get-tuple-element(s), index=2
  t = f64[2,2] transpose(x), dimensions={1,0}
  d = f64[2,2] dot(x, t), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  h = f64[2,2] tanh(d)
  one = s32[] constant(1)
  ni = s32[] add(i, one)
  ROOT r = (s32[], f64[2,2], s32[]) tuple(n, h, ni)
}

cond {
  s = (s32[], f64[2,2], s32[]) parameter(0)
  n = s32[] get-tuple-element(s), index=0
  i = s32[] get-tuple-element(s), index=2
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  x = f64[2,2] parameter(0)
  n = s32[] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f64[2,2], s32[]) tuple(n, x, zero)
  ROOT w = (s32[], f64[2,2], s32[]) while(init), condition=cond, body=body
}
)";
  auto counted_module = testing::ParseHloOrFail(counted);
  ASSERT_NE(counted_module, nullptr);
  std::mt19937 random(37);
  for (int32_t n : {0, 1, 5}) {
    SCOPED_TRACE(n);
    ExpectGradientsMatchFiniteDifferences(
        *counted_module, {0}, {RandomF64(F64({2, 2}), random, -1, 1), Literal::Scalar<int32_t>(n)});
  }
}

// Three levels: a loop whose body's conditional runs a loop in one branch.
TEST(AutodiffControlFlowTest, ALoopInAConditionalInALoop) {
  const std::string text = R"(
HloModule deep

inner_body {
  s = (f64[2], s32[]) parameter(0)
  x = f64[2] get-tuple-element(s), index=0
  j = s32[] get-tuple-element(s), index=1
  sx = f64[2] sine(x)
  sq = f64[2] multiply(sx, sx)
  nx = f64[2] add(x, sq)
  one = s32[] constant(1)
  nj = s32[] add(j, one)
  ROOT r = (f64[2], s32[]) tuple(nx, nj)
}

inner_cond {
  s = (f64[2], s32[]) parameter(0)
  x = f64[2] get-tuple-element(s), index=0
  x0 = f64[1] slice(x), slice={[0:1]}
  first = f64[] reshape(x0)
  bound = f64[] constant(3)
  ROOT lt = pred[] compare(first, bound), direction=LT
}

looping {
  x = f64[2] parameter(0)
  zero = s32[] constant(0)
  t = (f64[2], s32[]) tuple(x, zero)
  w = (f64[2], s32[]) while(t), condition=inner_cond, body=inner_body
  ROOT y = f64[2] get-tuple-element(w), index=0
}

scaling {
  p = (f64[2], f64[2]) parameter(0)
  x = f64[2] get-tuple-element(p), index=0
  a = f64[2] get-tuple-element(p), index=1
  ROOT y = f64[2] multiply(x, a)
}

outer_body {
  s = (f64[2], f64[2], s32[]) parameter(0)
  x = f64[2] get-tuple-element(s), index=0
  a = f64[2] get-tuple-element(s), index=1
  i = s32[] get-tuple-element(s), index=2
  two = s32[] constant(2)
  r = s32[] remainder(i, two)
  zero = s32[] constant(0)
  even = pred[] compare(r, zero), direction=EQ
  xa = (f64[2], f64[2]) tuple(x, a)
  y = f64[2] conditional(even, x, xa), true_computation=looping, false_computation=scaling
  one = s32[] constant(1)
  ni = s32[] add(i, one)
  ROOT out = (f64[2], f64[2], s32[]) tuple(y, a, ni)
}

outer_cond {
  s = (f64[2], f64[2], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=2
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  x = f64[2] parameter(0)
  a = f64[2] parameter(1)
  zero = s32[] constant(0)
  init = (f64[2], f64[2], s32[]) tuple(x, a, zero)
  w = (f64[2], f64[2], s32[]) while(init), condition=outer_cond, body=outer_body
  ROOT rx = f64[2] get-tuple-element(w), index=0
}
)";
  auto module = testing::ParseHloOrFail(text);
  ASSERT_NE(module, nullptr);
  ExpectGradientsMatchFiniteDifferences(
      *module, {0, 1}, {Literal::FromVector<double>({0.4, 0.7}), Literal::FromVector<double>({0.9, 1.1})}, 1,
      {1e-7, 1e-6});
}

}  // namespace
}  // namespace kiln
