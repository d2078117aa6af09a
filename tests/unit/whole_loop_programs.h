// Small while loops that the GPU backends run whole (core/lowering/
// whole_loop_plan.h), as HLO text their tests share: the cuda tests run
// them through the host kernel harness, the vulkan tests on lavapipe.
#pragma once

#include <vector>

namespace kiln::testing::whole_loop {

// A fori_loop to n (a parameter) whose f32 accumulator gains x * i each trip.
inline constexpr char kForiAccumulate[] = R"(HloModule fori_accumulate
cond {
  s = (s32[], s32[], f32[8], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[], f32[8], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  x = f32[8] get-tuple-element(s), index=2
  acc = f32[8] get-tuple-element(s), index=3
  one = s32[] constant(1)
  next = s32[] add(i, one)
  fi = f32[] convert(i)
  b = f32[8] broadcast(fi), dimensions={}
  term = f32[8] multiply(x, b)
  sum = f32[8] add(acc, term)
  ROOT t = (s32[], s32[], f32[8], f32[8]) tuple(next, n, x, sum)
}
ENTRY main {
  n = s32[] parameter(0)
  x = f32[8] parameter(1)
  zero = s32[] constant(0)
  acc = f32[8] constant({0.1, -0.2, 0.3, 0, 1e-3, 5, -7.5, 0.25})
  init = (s32[], s32[], f32[8], f32[8]) tuple(zero, n, x, acc)
  ROOT w = (s32[], s32[], f32[8], f32[8]) while(init), condition=cond, body=body
})";

// The x the accumulation's tests pass (f32[8]).
inline const std::vector<float> kForiX = {0.5f, -0.25f, 1.5f, 3.0f, 0.001f, -2.0f, 0.75f, 1.25f};

// Rows of 64 reduced in the body (a sum into the state, a max the next
// state is made from). Small integers keep every sum exact in any order.
inline constexpr char kRowReductionLoop[] = R"(HloModule row_reduction_loop
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
cond {
  s = (s32[], f32[16,64], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  limit = s32[] constant(20)
  ROOT lt = pred[] compare(i, limit), direction=LT
}
body {
  s = (s32[], f32[16,64], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  m = f32[16,64] get-tuple-element(s), index=1
  r = f32[16] get-tuple-element(s), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  zero = f32[] constant(0)
  sums = f32[16] reduce(m, zero), dimensions={1}, to_apply=add_f32
  r2 = f32[16] add(r, sums)
  low = f32[] constant(-inf)
  maxes = f32[16] reduce(m, low), dimensions={1}, to_apply=max_f32
  top = f32[16,64] broadcast(maxes), dimensions={0}
  m2 = f32[16,64] subtract(top, m)
  ROOT t = (s32[], f32[16,64], f32[16]) tuple(next, m2, r2)
}
ENTRY main {
  m = f32[16,64] parameter(0)
  zero = s32[] constant(0)
  r = f32[16] constant({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
  init = (s32[], f32[16,64], f32[16]) tuple(zero, m, r)
  ROOT w = (s32[], f32[16,64], f32[16]) while(init), condition=cond, body=body
})";

// Conditionals in the body: an s32 index picks one of three branches
// (doubling, subtracting one, or the operand itself: a branch whose result
// is its parameter); i % 5 of 3 and 4, out of range, run the last; then a pred
// picks a branch that negates or one that adds its two operands.
inline constexpr char kConditionalLoop[] = R"(HloModule conditional_loop
double {
  x = f32[8] parameter(0)
  two = f32[] constant(2)
  b = f32[8] broadcast(two), dimensions={}
  ROOT y = f32[8] multiply(x, b)
}
less_one {
  x = f32[8] parameter(0)
  one = f32[] constant(1)
  b = f32[8] broadcast(one), dimensions={}
  ROOT y = f32[8] subtract(x, b)
}
same {
  ROOT x = f32[8] parameter(0)
}
flip {
  p = (f32[8], f32[8]) parameter(0)
  x = f32[8] get-tuple-element(p), index=0
  ROOT y = f32[8] negate(x)
}
sum {
  p = (f32[8], f32[8]) parameter(0)
  x = f32[8] get-tuple-element(p), index=0
  y = f32[8] get-tuple-element(p), index=1
  ROOT z = f32[8] add(x, y)
}
cond {
  s = (s32[], f32[8], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  limit = s32[] constant(31)
  ROOT lt = pred[] compare(i, limit), direction=LT
}
body {
  s = (s32[], f32[8], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[8] get-tuple-element(s), index=1
  w = f32[8] get-tuple-element(s), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  five = s32[] constant(5)
  pick = s32[] remainder(i, five)
  y = f32[8] conditional(pick, x, x, x), branch_computations={double, less_one, same}
  ten = s32[] constant(10)
  early = pred[] compare(i, ten), direction=LT
  pair = (f32[8], f32[8]) tuple(y, w)
  z = f32[8] conditional(early, pair, pair), true_computation=flip, false_computation=sum
  ROOT t = (s32[], f32[8], f32[8]) tuple(next, z, w)
}
ENTRY main {
  x = f32[8] parameter(0)
  w = f32[8] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[8], f32[8]) tuple(zero, x, w)
  ROOT loop = (s32[], f32[8], f32[8]) while(init), condition=cond, body=body
})";

}  // namespace kiln::testing::whole_loop
