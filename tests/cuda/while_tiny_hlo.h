// benchmarks/workloads/full/while_tiny.hlo as the CUDA backend's tests use
// it: a JAX while loop of 1000 trips of c * 0.999 + 0.001 over f32[4], with
// a counter in its state (the loop the cuda backend runs whole, whole_loop.h).
#pragma once

namespace kiln::cuda_test {

inline constexpr char kWhileTinyHlo[] = R"(HloModule while_tiny
closed_call.1 {
  Arg_0.1 = s32[] parameter(0)
  constant.7 = s32[] constant(1)
  add.2 = s32[] add(Arg_0.1, constant.7)
  Arg_1.1 = f32[4]{0} parameter(1)
  constant.6 = f32[] constant(0.999)
  broadcast.3 = f32[4]{0} broadcast(constant.6), dimensions={}
  mul.1 = f32[4]{0} multiply(Arg_1.1, broadcast.3)
  constant.5 = f32[] constant(0.001)
  broadcast.2 = f32[4]{0} broadcast(constant.5), dimensions={}
  add.3 = f32[4]{0} add(mul.1, broadcast.2)
  ROOT tuple.1 = (s32[], f32[4]{0}) tuple(add.2, add.3)
}
region_0.2 {
  arg_tuple.1 = (s32[], s32[], f32[4]{0}) parameter(0)
  get-tuple-element.3 = s32[] get-tuple-element(arg_tuple.1), index=0
  constant.8 = s32[] constant(1)
  add.5 = s32[] add(get-tuple-element.3, constant.8)
  get-tuple-element.4 = s32[] get-tuple-element(arg_tuple.1), index=1
  get-tuple-element.5 = f32[4]{0} get-tuple-element(arg_tuple.1), index=2
  closed_call.3 = (s32[], f32[4]{0}) call(get-tuple-element.4, get-tuple-element.5), to_apply=closed_call.1
  closed_call.4 = s32[] get-tuple-element(closed_call.3), index=0
  closed_call.5 = f32[4]{0} get-tuple-element(closed_call.3), index=1
  ROOT tuple.3 = (s32[], s32[], f32[4]{0}) tuple(add.5, closed_call.4, closed_call.5)
}
region_1.3 {
  arg_tuple.3 = (s32[], s32[], f32[4]{0}) parameter(0)
  get-tuple-element.9 = s32[] get-tuple-element(arg_tuple.3), index=0
  constant.10 = s32[] constant(1000)
  ROOT lt.1 = pred[] compare(get-tuple-element.9, constant.10), direction=LT
}
ENTRY main.4 {
  constant.11 = s32[] constant(0)
  c.1 = f32[4]{0} parameter(0)
  while.5 = (s32[], s32[], f32[4]{0}) tuple(constant.11, constant.11, c.1)
  while.6 = (s32[], s32[], f32[4]{0}) while(while.5), condition=region_1.3, body=region_0.2
  ROOT while.9 = f32[4]{0} get-tuple-element(while.6), index=2
})";

}  // namespace kiln::cuda_test
