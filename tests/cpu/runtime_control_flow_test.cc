// while, conditional (predicate and branch-index forms) and call on the CPU
// backend, against the interpreter.
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

using testing::ExpectMatchesInterpreter;

TEST(RuntimeControlFlowTest, WhileWithDotsInTheBody) {
  ExpectMatchesInterpreter(R"(HloModule m
cond {
  s = (s32[], f32[8,8], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[8,8], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  m = f32[8,8] get-tuple-element(s), index=1
  v = f32[8] get-tuple-element(s), index=2
  one = s32[] constant(1)
  j = s32[] add(i, one)
  w = f32[8] dot(m, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  mm = f32[8,8] dot(m, m), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  scale = f32[] constant(0.25)
  b = f32[8,8] broadcast(scale), dimensions={}
  m2 = f32[8,8] multiply(mm, b)
  ROOT t = (s32[], f32[8,8], f32[8]) tuple(j, m2, w)
}
ENTRY e {
  m = f32[8,8] parameter(0)
  v = f32[8] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[8,8], f32[8]) tuple(zero, m, v)
  loop = (s32[], f32[8,8], f32[8]) while(init), condition=cond, body=body
  r = f32[8] get-tuple-element(loop), index=2
  c = s32[] get-tuple-element(loop), index=0
  ROOT out = (f32[8], s32[]) tuple(r, c)
})",
                           1e-4);
}

TEST(RuntimeControlFlowTest, WhileThatSwapsAndPassesThroughItsState) {
  ExpectMatchesInterpreter(R"(HloModule m
cond {
  s = (s32[], f32[3], f32[3], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[3], f32[3], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  a = f32[3] get-tuple-element(s), index=1
  b = f32[3] get-tuple-element(s), index=2
  k = f32[2] get-tuple-element(s), index=3
  one = s32[] constant(1)
  j = s32[] add(i, one)
  a2 = f32[3] add(a, b)
  ROOT t = (s32[], f32[3], f32[3], f32[2]) tuple(j, b, a2, k)
}
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  k = f32[2] parameter(2)
  zero = s32[] constant(0)
  init = (s32[], f32[3], f32[3], f32[2]) tuple(zero, a, b, k)
  ROOT loop = (s32[], f32[3], f32[3], f32[2]) while(init), condition=cond, body=body
})");
}

TEST(RuntimeControlFlowTest, WhileThatNeverRunsItsBody) {
  ExpectMatchesInterpreter(R"(HloModule m
cond {
  s = (f32[4]) parameter(0)
  ROOT f = pred[] constant(false)
}
body {
  s = (f32[4]) parameter(0)
  x = f32[4] get-tuple-element(s), index=0
  y = f32[4] negate(x)
  ROOT t = (f32[4]) tuple(y)
}
ENTRY e {
  x = f32[4] parameter(0)
  init = (f32[4]) tuple(x)
  ROOT loop = (f32[4]) while(init), condition=cond, body=body
})");
}

constexpr char kConditionalModule[] = R"(HloModule m
negate_branch {
  x = f32[5] parameter(0)
  ROOT n = f32[5] negate(x)
}
exp_branch {
  x = f32[5] parameter(0)
  ROOT e = f32[5] exponential(x)
}
pass_branch {
  x = f32[5] parameter(0)
  ROOT c = f32[5] copy(x)
}
ENTRY e {
  p = pred[] parameter(0)
  i = s32[] parameter(1)
  x = f32[5] parameter(2)
  by_pred = f32[5] conditional(p, x, x), true_computation=negate_branch, false_computation=exp_branch
  by_index = f32[5] conditional(i, x, x, x), branch_computations={negate_branch, exp_branch, pass_branch}
  ROOT t = (f32[5], f32[5]) tuple(by_pred, by_index)
})";

TEST(RuntimeControlFlowTest, ConditionalBothForms) {
  std::unique_ptr<Module> module = testing::ParseOrDie(kConditionalModule);
  ASSERT_NE(module, nullptr);
  CpuBackend cpu;
  interpreter::InterpreterBackend reference;
  const Literal x = Literal::FromVector<float>({0.5f, -1.0f, 2.0f, 0.0f, 3.0f});
  for (bool p : {true, false}) {
    for (int32_t i : {0, 1, 2, 7, -3}) {  // out-of-range indices run the last branch
      const std::vector<Literal> arguments = {Literal::Scalar(p), Literal::Scalar(i), x};
      KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> got, testing::RunOn(cpu, *module, arguments));
      KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, testing::RunOn(reference, *module, arguments));
      ASSERT_EQ(got.size(), 2u);
      for (size_t r = 0; r < 2; ++r) {
        for (int64_t e = 0; e < 5; ++e) {
          EXPECT_NEAR(got[r].data<float>()[e], want[r].data<float>()[e], 1e-5) << "p=" << p << " i=" << i;
        }
      }
    }
  }
}

TEST(RuntimeControlFlowTest, CallIsInlined) {
  ExpectMatchesInterpreter(R"(HloModule m
add_and_keep {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  s = f32[4] add(a, b)
  ROOT t = (f32[4], f32[4]) tuple(s, a)
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  c = (f32[4], f32[4]) call(x, y), to_apply=add_and_keep
  u = f32[4] get-tuple-element(c), index=0
  v = f32[4] get-tuple-element(c), index=1
  ROOT m = f32[4] multiply(u, v)
})");
}

TEST(RuntimeControlFlowTest, NestedLoopInsideABranch) {
  ExpectMatchesInterpreter(R"(HloModule m
cond {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[2] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[2] add(x, x)
  ROOT t = (s32[], f32[2]) tuple(j, y)
}
looping {
  x = f32[2] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[2]) tuple(zero, x)
  w = (s32[], f32[2]) while(init), condition=cond, body=body
  ROOT r = f32[2] get-tuple-element(w), index=1
}
plain {
  x = f32[2] parameter(0)
  ROOT n = f32[2] negate(x)
}
ENTRY e {
  p = pred[] constant(true)
  x = f32[2] parameter(0)
  ROOT c = f32[2] conditional(p, x, x), true_computation=looping, false_computation=plain
})");
}

// lax.fori_loop with a scalar body: every step of the condition and body is
// a kernel run once on the calling thread, which the loop calls directly.
// The results must be the interpreter's exactly, on any thread count (no
// multiply feeds an add, so no contraction to a fused multiply-add applies).
TEST(RuntimeControlFlowTest, LoopOfScalarKernelsIsExactOnEveryThreadCount) {
  std::unique_ptr<Module> module = testing::ParseOrDie(R"(HloModule m
cond {
  s = (s32[], f32[], f64[], s64[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(1000)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[], f64[], s64[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[] get-tuple-element(s), index=1
  y = f64[] get-tuple-element(s), index=2
  k = s64[] get-tuple-element(s), index=3
  one = s32[] constant(1)
  j = s32[] add(i, one)
  a = f32[] constant(1.0001)
  c = f32[] constant(0.5)
  xc = f32[] add(x, c)
  x2 = f32[] divide(xc, a)
  d = f64[] constant(0.25)
  e = f64[] constant(1.0001)
  yd = f64[] add(y, d)
  y2 = f64[] divide(yd, e)
  three = s64[] constant(3)
  k3 = s64[] multiply(k, three)
  ij = s64[] convert(i)
  k2 = s64[] add(k3, ij)
  ROOT t = (s32[], f32[], f64[], s64[]) tuple(j, x2, y2, k2)
}
ENTRY e {
  x = f32[] parameter(0)
  y = f64[] parameter(1)
  k = s64[] parameter(2)
  zero = s32[] constant(0)
  init = (s32[], f32[], f64[], s64[]) tuple(zero, x, y, k)
  w = (s32[], f32[], f64[], s64[]) while(init), condition=cond, body=body
  rx = f32[] get-tuple-element(w), index=1
  ry = f64[] get-tuple-element(w), index=2
  rk = s64[] get-tuple-element(w), index=3
  fy = f32[] convert(ry)
  fk = f32[] convert(rk)
  s1 = f32[] add(rx, fy)
  ROOT s2 = f32[] add(s1, fk)
})");
  ASSERT_NE(module, nullptr);
  testing::ExpectMatchesInterpreterOnThreads(*module, {1, 2, 4}, 0);
}

// A body with a kernel split over the threads (a large elementwise step)
// next to a scalar one runs its steps as a sequence.
TEST(RuntimeControlFlowTest, LoopWithAParallelKernelInItsBody) {
  std::unique_ptr<Module> module = testing::ParseOrDie(R"(HloModule m
cond {
  s = (s32[], f32[262144]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[262144]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[262144] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  h = f32[] constant(0.75)
  hb = f32[262144] broadcast(h), dimensions={}
  m = f32[262144] multiply(x, hb)
  y = f32[262144] add(m, x)
  ROOT t = (s32[], f32[262144]) tuple(j, y)
}
ENTRY e {
  x = f32[262144] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[262144]) tuple(zero, x)
  w = (s32[], f32[262144]) while(init), condition=cond, body=body
  ROOT r = f32[262144] get-tuple-element(w), index=1
})");
  ASSERT_NE(module, nullptr);
  testing::ExpectMatchesInterpreterOnThreads(*module, {1, 2, 4}, 1e-5);
}

}  // namespace
}  // namespace kiln::cpu
