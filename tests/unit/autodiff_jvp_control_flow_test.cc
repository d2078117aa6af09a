// Forward mode through while loops (trip counts known only at run time,
// zero trips, an invariant whose tangent reaches the carried value, nested
// loops) and conditionals (both forms, loops inside, inside loops): each
// against f64 central differences and reverse mode
// (tests/unit/autodiff_jvp_check.h), loops also against the same
// computation unrolled for the trip count the loop ran; and forward mode
// keeps no tape.
#include <cmath>
#include <random>
#include <sstream>
#include <string>

#include "core/autodiff/jvp.h"
#include "core/hlo_parser.h"
#include "core/tape_custom_calls.h"
#include "tests/unit/autodiff_jvp_check.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

using testing::ExpectJvpMatches;
using testing::RandomF64;
using testing::RunLeaves;

using testing::F64;

std::vector<Literal> RunOn(const Module& module, const std::vector<Literal>& inputs,
                           const char* backend_name) {
  StatusOr<std::unique_ptr<Backend>> backend = CreateBackend(backend_name);
  EXPECT_TRUE(backend.ok());
  StatusOr<std::unique_ptr<Executable>> executable = (*backend)->Compile(module, CompileOptions{});
  EXPECT_TRUE(executable.ok()) << executable.status().ToString();
  if (!executable.ok()) return {};
  return RunLeaves(**executable, **backend, inputs);
}

constexpr char kSum[] = R"(
sum_f64 {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT s = f64[] add(a, b)
}
)";

// x <- x * a + cos(x) * 0.5 while sum(x^2) < 50; a is invariant; k counts.
constexpr char kSpiral[] = R"(
spiral_body {
  s = (f64[2], s32[], f64[2]) parameter(0)
  x = f64[2] get-tuple-element(s), index=0
  k = s32[] get-tuple-element(s), index=1
  a = f64[2] get-tuple-element(s), index=2
  xa = f64[2] multiply(x, a)
  cx = f64[2] cosine(x)
  half = f64[] constant(0.5)
  h = f64[2] broadcast(half), dimensions={}
  hc = f64[2] multiply(cx, h)
  nx = f64[2] add(xa, hc)
  one = s32[] constant(1)
  nk = s32[] add(k, one)
  ROOT r = (f64[2], s32[], f64[2]) tuple(nx, nk, a)
}

spiral_cond {
  s = (f64[2], s32[], f64[2]) parameter(0)
  x = f64[2] get-tuple-element(s), index=0
  sq = f64[2] multiply(x, x)
  zero = f64[] constant(0)
  n = f64[] reduce(sq, zero), dimensions={0}, to_apply=sum_f64
  bound = f64[] constant(50)
  ROOT lt = pred[] compare(n, bound), direction=LT
}
)";

std::string SpiralLoop() {
  return std::string("HloModule spiral\n") + kSum + kSpiral + R"(
ENTRY main {
  x = f64[2] parameter(0)
  a = f64[2] parameter(1)
  zero = s32[] constant(0)
  init = (f64[2], s32[], f64[2]) tuple(x, zero, a)
  w = (f64[2], s32[], f64[2]) while(init), condition=spiral_cond, body=spiral_body
  rx = f64[2] get-tuple-element(w), index=0
  rk = s32[] get-tuple-element(w), index=1
  ROOT out = (f64[2], s32[]) tuple(rx, rk)
}
)";
}

// The same with the body called `trips` times.
std::string SpiralUnrolled(int64_t trips) {
  std::ostringstream text;
  text << "HloModule spiral_unrolled\n"
       << kSum << kSpiral << R"(
ENTRY main {
  x = f64[2] parameter(0)
  a = f64[2] parameter(1)
  zero = s32[] constant(0)
  s0 = (f64[2], s32[], f64[2]) tuple(x, zero, a)
)";
  for (int64_t k = 1; k <= trips; ++k) {
    text << "  s" << k << " = (f64[2], s32[], f64[2]) call(s" << k - 1 << "), to_apply=spiral_body\n";
  }
  text << "  rx = f64[2] get-tuple-element(s" << trips << "), index=0\n"
       << "  rk = s32[] get-tuple-element(s" << trips << "), index=1\n"
       << "  ROOT out = (f64[2], s32[]) tuple(rx, rk)\n}\n";
  return text.str();
}

// The JVPs of `looped` and `unrolled` give the same results and tangents.
void ExpectSameAsUnrolled(const Module& looped, const Module& unrolled, std::vector<int64_t> wrt,
                          std::vector<Literal> inputs, std::mt19937& random) {
  KILN_ASSERT_OK_AND_ASSIGN(auto looped_jvp, autodiff::BuildJvp(looped, wrt));
  KILN_ASSERT_OK_AND_ASSIGN(auto unrolled_jvp, autodiff::BuildJvp(unrolled, wrt));
  for (int64_t number : wrt) inputs.push_back(RandomF64(inputs[static_cast<size_t>(number)].shape(), random));
  for (const char* backend : {"interpreter", "cpu"}) {
    SCOPED_TRACE(backend);
    const std::vector<Literal> got = RunOn(*looped_jvp, inputs, backend);
    const std::vector<Literal> want = RunOn(*unrolled_jvp, inputs, backend);
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

bool HoldsTape(const Module& module) {
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode == Opcode::kCustomCall &&
          IsTapeCustomCall(instruction->attrs.custom_call_target)) {
        return true;
      }
    }
  }
  return false;
}

// With respect to x, a and the invariant a alone: a's tangent reaches the
// carried x in the first iteration, so the loop carries x's tangent too.
TEST(AutodiffJvpControlFlowTest, WhileWithADataDependentTripCount) {
  auto looped = testing::ParseHloOrFail(SpiralLoop());
  ASSERT_NE(looped, nullptr);
  std::mt19937 random(1);
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<Literal> inputs = {RandomF64(F64({2}), random, 0.3, 0.7),
                                   RandomF64(F64({2}), random, 1.2, 1.5)};
    const int32_t trips = RunOn(*looped, inputs, "interpreter").at(1).data<int32_t>()[0];
    SCOPED_TRACE("trip count " + std::to_string(trips));
    EXPECT_GT(trips, 3);
    for (const std::vector<int64_t>& wrt : {std::vector<int64_t>{0, 1}, std::vector<int64_t>{1}}) {
      ExpectJvpMatches(*looped, wrt, inputs, static_cast<uint32_t>(trial));
      auto unrolled = testing::ParseHloOrFail(SpiralUnrolled(trips));
      ASSERT_NE(unrolled, nullptr);
      ExpectSameAsUnrolled(*looped, *unrolled, wrt, inputs, random);
    }
  }
  KILN_ASSERT_OK_AND_ASSIGN(auto jvp, autodiff::BuildJvp(*looped, std::vector<int64_t>{0, 1}));
  EXPECT_FALSE(HoldsTape(*jvp)) << "forward mode keeps no tape";
}

TEST(AutodiffJvpControlFlowTest, WhileThatRunsZeroTimes) {
  auto looped = testing::ParseHloOrFail(SpiralLoop());
  ASSERT_NE(looped, nullptr);
  const std::vector<Literal> inputs = {Literal::FromVector<double>({8.0, -7.0}),
                                       Literal::FromVector<double>({1.3, 1.4})};
  ASSERT_EQ(RunOn(*looped, inputs, "interpreter").at(1).data<int32_t>()[0], 0);
  ExpectJvpMatches(*looped, {0, 1}, inputs);
}

// An outer loop whose body runs an inner loop (trip count: the outer
// iteration number + 1; then x grows by the factor a > 1) inside a
// conditional on the sign of sum(x), and a
// 3-way conditional after it whose branches differ (one ignores its operand).
TEST(AutodiffJvpControlFlowTest, NestedLoopsAndConditionals) {
  const std::string text = std::string("HloModule nested\n") + kSum + R"(
inner_body {
  s = (f64[2], f64[2], s32[], s32[]) parameter(0)
  x = f64[2] get-tuple-element(s), index=0
  a = f64[2] get-tuple-element(s), index=1
  j = s32[] get-tuple-element(s), index=2
  limit = s32[] get-tuple-element(s), index=3
  xa = f64[2] multiply(x, a)
  sxa = f64[2] sine(xa)
  quarter = f64[] constant(0.25)
  q = f64[2] broadcast(quarter), dimensions={}
  sq = f64[2] multiply(sxa, sxa)
  d = f64[2] multiply(q, sq)
  nx = f64[2] add(x, d)
  one = s32[] constant(1)
  nj = s32[] add(j, one)
  ROOT r = (f64[2], f64[2], s32[], s32[]) tuple(nx, a, nj, limit)
}

inner_cond {
  s = (f64[2], f64[2], s32[], s32[]) parameter(0)
  j = s32[] get-tuple-element(s), index=2
  limit = s32[] get-tuple-element(s), index=3
  ROOT le = pred[] compare(j, limit), direction=LE
}

positive {
  p = (f64[2], f64[2], s32[]) parameter(0)
  x = f64[2] get-tuple-element(p), index=0
  a = f64[2] get-tuple-element(p), index=1
  i = s32[] get-tuple-element(p), index=2
  zero = s32[] constant(0)
  t = (f64[2], f64[2], s32[], s32[]) tuple(x, a, zero, i)
  w = (f64[2], f64[2], s32[], s32[]) while(t), condition=inner_cond, body=inner_body
  y = f64[2] get-tuple-element(w), index=0
  ROOT ya = f64[2] multiply(y, a)
}

negative {
  p = (f64[2], f64[2], s32[]) parameter(0)
  x = f64[2] get-tuple-element(p), index=0
  a = f64[2] get-tuple-element(p), index=1
  ROOT y = f64[2] subtract(x, a)
}

outer_body {
  s = (f64[2], f64[2], s32[]) parameter(0)
  x = f64[2] get-tuple-element(s), index=0
  a = f64[2] get-tuple-element(s), index=1
  i = s32[] get-tuple-element(s), index=2
  zero = f64[] constant(0)
  n = f64[] reduce(x, zero), dimensions={0}, to_apply=sum_f64
  up = pred[] compare(n, zero), direction=GT
  y = f64[2] conditional(up, s, s), true_computation=positive, false_computation=negative
  one = s32[] constant(1)
  ni = s32[] add(i, one)
  ROOT r = (f64[2], f64[2], s32[]) tuple(y, a, ni)
}

outer_cond {
  s = (f64[2], f64[2], s32[]) parameter(0)
  x = f64[2] get-tuple-element(s), index=0
  sq = f64[2] multiply(x, x)
  zero = f64[] constant(0)
  n = f64[] reduce(sq, zero), dimensions={0}, to_apply=sum_f64
  bound = f64[] constant(30)
  ROOT lt = pred[] compare(n, bound), direction=LT
}

square {
  p = f64[2] parameter(0)
  ROOT y = f64[2] multiply(p, p)
}

ignore {
  p = f64[2] parameter(0)
  ROOT y = f64[2] constant({1, 2})
}

exponent {
  p = f64[2] parameter(0)
  ROOT y = f64[2] exponential(p)
}

ENTRY main {
  x = f64[2] parameter(0)
  a = f64[2] parameter(1)
  b = s32[] parameter(2)
  zero = s32[] constant(0)
  init = (f64[2], f64[2], s32[]) tuple(x, a, zero)
  w = (f64[2], f64[2], s32[]) while(init), condition=outer_cond, body=outer_body
  rx = f64[2] get-tuple-element(w), index=0
  ri = s32[] get-tuple-element(w), index=2
  tenth = f64[] constant(0.1)
  t = f64[2] broadcast(tenth), dimensions={}
  small = f64[2] multiply(rx, t)
  picked = f64[2] conditional(b, small, a, small), branch_computations={square, ignore, exponent}
  ROOT out = (f64[2], s32[], f64[2]) tuple(rx, ri, picked)
}
)";
  auto module = testing::ParseHloOrFail(text);
  ASSERT_NE(module, nullptr);
  std::mt19937 random(2);
  for (int32_t branch : {0, 1, 2, 7}) {  // 7 runs the last branch
    SCOPED_TRACE("branch " + std::to_string(branch));
    for (double sign : {1.0, -1.0}) {
      std::vector<Literal> inputs = {RandomF64(F64({2}), random, 0.3, 0.8),
                                     RandomF64(F64({2}), random, 1.1, 1.4), Literal::Scalar<int32_t>(branch)};
      for (double& value : inputs[0].data<double>()) value *= sign;
      const int32_t trips = RunOn(*module, inputs, "interpreter").at(1).data<int32_t>()[0];
      SCOPED_TRACE("outer trip count " + std::to_string(trips));
      EXPECT_GT(trips, 1);
      ExpectJvpMatches(*module, {0, 1}, std::move(inputs), static_cast<uint32_t>(branch + 10), {1e-6, 1e-6});
    }
  }
}

}  // namespace
}  // namespace kiln
