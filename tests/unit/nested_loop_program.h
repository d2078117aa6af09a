// An HLO program shared by tests of loops: an outer loop of two iterations
// around an inner loop that never ends (its condition is constant true).
#pragma once

namespace kiln {

inline constexpr char kNestedEndlessLoop[] = R"(HloModule nested
inner_cond {
  s = s32[] parameter(0)
  ROOT yes = pred[] constant(true)
}
inner_body {
  s = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT next = s32[] add(s, one)
}
outer_cond {
  s = s32[] parameter(0)
  two = s32[] constant(2)
  ROOT lt = pred[] compare(s, two), direction=LT
}
outer_body {
  s = s32[] parameter(0)
  spin = s32[] while(s), condition=inner_cond, body=inner_body
  ROOT next = s32[] add(s, spin)
}
ENTRY e {
  x = s32[] parameter(0)
  ROOT outer = s32[] while(x), condition=outer_cond, body=outer_body
})";

}  // namespace kiln
