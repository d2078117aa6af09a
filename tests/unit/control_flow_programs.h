// Programs whose loops run a number of times only their data decides, as
// HLO text in a float type the caller names: "f64" where gradients are
// checked against finite differences (tests/unit), "f32" on devices that
// may lack f64 (the device backends' tape tests). Both differentiate the
// same programs, so they are written once, here, with "$F" standing for
// the float type.
#pragma once

#include <string>
#include <string_view>

namespace kiln::testing::control_flow {

// `text` with every "$F" replaced by `type` (e.g. "f32").
inline std::string InFloatType(std::string_view text, std::string_view type) {
  std::string result;
  result.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "$F") == 0) {
      result += type;
      ++i;
    } else {
      result += text[i];
    }
  }
  return result;
}

// add_$F: the reducer of the loop conditions.
inline std::string AddComputation(std::string_view type) {
  return InFloatType(R"(
add_$F {
  a = $F[] parameter(0)
  b = $F[] parameter(1)
  ROOT s = $F[] add(a, b)
}
)",
                     type);
}

// grow_body / grow_cond: x grows as x * a + sin(x) while |x|^2 < 100; a is
// loop-invariant; i counts the iterations. State (x: [3], a: [3], i).
inline std::string GrowComputations(std::string_view type) {
  return InFloatType(R"(
grow_body {
  s = ($F[3], $F[3], s32[]) parameter(0)
  x = $F[3] get-tuple-element(s), index=0
  a = $F[3] get-tuple-element(s), index=1
  i = s32[] get-tuple-element(s), index=2
  xa = $F[3] multiply(x, a)
  sx = $F[3] sine(x)
  nx = $F[3] add(xa, sx)
  one = s32[] constant(1)
  ni = s32[] add(i, one)
  ROOT r = ($F[3], $F[3], s32[]) tuple(nx, a, ni)
}

grow_cond {
  s = ($F[3], $F[3], s32[]) parameter(0)
  x = $F[3] get-tuple-element(s), index=0
  sq = $F[3] multiply(x, x)
  zero = $F[] constant(0)
  n = $F[] reduce(sq, zero), dimensions={0}, to_apply=add_$F
  bound = $F[] constant(100)
  ROOT lt = pred[] compare(n, bound), direction=LT
}
)",
                     type);
}

// inner_body / inner_cond / outer_cond of NestedLoopsModule: the inner loop
// runs its counter j up to `limit` (inclusive); the outer condition holds
// while |x|^2 < 40.
inline std::string NestedComputations(std::string_view type) {
  return InFloatType(R"(
inner_body {
  s = ($F[2], $F[2], s32[], s32[]) parameter(0)
  x = $F[2] get-tuple-element(s), index=0
  a = $F[2] get-tuple-element(s), index=1
  j = s32[] get-tuple-element(s), index=2
  limit = s32[] get-tuple-element(s), index=3
  xa = $F[2] multiply(x, a)
  sxa = $F[2] sine(xa)
  quarter = $F[] constant(0.25)
  q = $F[2] broadcast(quarter), dimensions={}
  sq = $F[2] multiply(sxa, sxa)
  d = $F[2] multiply(q, sq)
  nx = $F[2] add(x, d)
  one = s32[] constant(1)
  nj = s32[] add(j, one)
  ROOT r = ($F[2], $F[2], s32[], s32[]) tuple(nx, a, nj, limit)
}

inner_cond {
  s = ($F[2], $F[2], s32[], s32[]) parameter(0)
  j = s32[] get-tuple-element(s), index=2
  limit = s32[] get-tuple-element(s), index=3
  ROOT le = pred[] compare(j, limit), direction=LE
}

outer_cond {
  s = ($F[2], $F[2], s32[]) parameter(0)
  x = $F[2] get-tuple-element(s), index=0
  sq = $F[2] multiply(x, x)
  zero = $F[] constant(0)
  n = $F[] reduce(sq, zero), dimensions={0}, to_apply=add_$F
  bound = $F[] constant(40)
  ROOT lt = pred[] compare(n, bound), direction=LT
}
)",
                     type);
}

// An inner loop whose trip count is the outer iteration number plus one,
// inside an outer loop that runs until x is large. Parameters x: [2],
// a: [2]; result (x, outer trip count).
inline std::string NestedLoopsModule(std::string_view type) {
  return "HloModule nested\n" + AddComputation(type) + NestedComputations(type) +
         InFloatType(R"(
outer_body {
  s = ($F[2], $F[2], s32[]) parameter(0)
  x = $F[2] get-tuple-element(s), index=0
  a = $F[2] get-tuple-element(s), index=1
  i = s32[] get-tuple-element(s), index=2
  zero = s32[] constant(0)
  t = ($F[2], $F[2], s32[], s32[]) tuple(x, a, zero, i)
  w = ($F[2], $F[2], s32[], s32[]) while(t), condition=inner_cond, body=inner_body
  y = $F[2] get-tuple-element(w), index=0
  nx = $F[2] multiply(y, a)
  one = s32[] constant(1)
  ni = s32[] add(i, one)
  ROOT r = ($F[2], $F[2], s32[]) tuple(nx, a, ni)
}

ENTRY main {
  x = $F[2] parameter(0)
  a = $F[2] parameter(1)
  zero = s32[] constant(0)
  init = ($F[2], $F[2], s32[]) tuple(x, a, zero)
  w = ($F[2], $F[2], s32[]) while(init), condition=outer_cond, body=outer_body
  rx = $F[2] get-tuple-element(w), index=0
  ri = s32[] get-tuple-element(w), index=2
  ROOT out = ($F[2], s32[]) tuple(rx, ri)
}
)",
                     type);
}

// even_step / odd_step: the two branches of ConditionalInALoopModule's
// body, each (x, a) -> x'.
inline std::string EvenOddComputations(std::string_view type) {
  return InFloatType(R"(
even_step {
  p = ($F[2], $F[2]) parameter(0)
  x = $F[2] get-tuple-element(p), index=0
  a = $F[2] get-tuple-element(p), index=1
  xa = $F[2] multiply(x, a)
  ROOT r = $F[2] add(xa, x)
}

odd_step {
  p = ($F[2], $F[2]) parameter(0)
  x = $F[2] get-tuple-element(p), index=0
  a = $F[2] get-tuple-element(p), index=1
  sx = $F[2] sine(x)
  ex = $F[2] multiply(sx, a)
  ROOT r = $F[2] add(ex, x)
}
)",
                     type);
}

// A loop whose body picks a branch by the parity of its iteration and that
// runs until |x|^2 >= 60. Parameters x: [2], a: [2]; result (x, trips).
inline std::string ConditionalInALoopModule(std::string_view type) {
  return "HloModule cond_in_loop\n" + AddComputation(type) + EvenOddComputations(type) +
         InFloatType(R"(
step_body {
  s = ($F[2], $F[2], s32[]) parameter(0)
  x = $F[2] get-tuple-element(s), index=0
  a = $F[2] get-tuple-element(s), index=1
  i = s32[] get-tuple-element(s), index=2
  two = s32[] constant(2)
  r = s32[] remainder(i, two)
  zero = s32[] constant(0)
  even = pred[] compare(r, zero), direction=EQ
  xa = ($F[2], $F[2]) tuple(x, a)
  y = $F[2] conditional(even, xa, xa), true_computation=even_step, false_computation=odd_step
  one = s32[] constant(1)
  ni = s32[] add(i, one)
  ROOT out = ($F[2], $F[2], s32[]) tuple(y, a, ni)
}

step_cond {
  s = ($F[2], $F[2], s32[]) parameter(0)
  x = $F[2] get-tuple-element(s), index=0
  sq = $F[2] multiply(x, x)
  zero = $F[] constant(0)
  n = $F[] reduce(sq, zero), dimensions={0}, to_apply=add_$F
  bound = $F[] constant(60)
  ROOT lt = pred[] compare(n, bound), direction=LT
}

ENTRY main {
  x = $F[2] parameter(0)
  a = $F[2] parameter(1)
  zero = s32[] constant(0)
  init = ($F[2], $F[2], s32[]) tuple(x, a, zero)
  w = ($F[2], $F[2], s32[]) while(init), condition=step_cond, body=step_body
  rx = $F[2] get-tuple-element(w), index=0
  ri = s32[] get-tuple-element(w), index=2
  ROOT out = ($F[2], s32[]) tuple(rx, ri)
}
)",
                     type);
}

// add_$F, grow_body/grow_cond and the branches of LoopInAConditionalModule:
// `looping` ((x, a) -> (grown x, trips)) and `straight` (a -> (sin(a) a, 0)).
inline std::string LoopInAConditionalComputations(std::string_view type) {
  return AddComputation(type) + GrowComputations(type) +
         InFloatType(R"(
looping {
  p = ($F[3], $F[3]) parameter(0)
  x = $F[3] get-tuple-element(p), index=0
  a = $F[3] get-tuple-element(p), index=1
  zero = s32[] constant(0)
  init = ($F[3], $F[3], s32[]) tuple(x, a, zero)
  w = ($F[3], $F[3], s32[]) while(init), condition=grow_cond, body=grow_body
  rx = $F[3] get-tuple-element(w), index=0
  ri = s32[] get-tuple-element(w), index=2
  ROOT r = ($F[3], s32[]) tuple(rx, ri)
}

straight {
  a = $F[3] parameter(0)
  sa = $F[3] sine(a)
  m = $F[3] multiply(sa, a)
  zero = s32[] constant(0)
  ROOT r = ($F[3], s32[]) tuple(m, zero)
}
)",
                     type);
}

// A conditional whose true branch is a loop (its operand a tuple) and whose
// false branch is straight-line code on another operand. Parameters x: [3],
// a: [3], the predicate; result (x, trips).
inline std::string LoopInAConditionalModule(std::string_view type) {
  return "HloModule loop_in_cond\n" + LoopInAConditionalComputations(type) +
         InFloatType(R"(
ENTRY main {
  x = $F[3] parameter(0)
  a = $F[3] parameter(1)
  p = pred[] parameter(2)
  xa = ($F[3], $F[3]) tuple(x, a)
  ROOT c = ($F[3], s32[]) conditional(p, xa, a), true_computation=looping, false_computation=straight
}
)",
                     type);
}

}  // namespace kiln::testing::control_flow
