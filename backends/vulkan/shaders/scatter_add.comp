// A scatter-add of rows (library_scatter.h): the operand copied to the
// output, then each update element added atomically into the output
// element its row's index picks. Dispatched twice, the push constants' mode
// saying which:
//   0  every output element gets the operand's;
//   1  every update element whose row index is in bounds (XLA skips the
//      windows that do not fit) is added with atomicAdd.
// ELEMENT_F32: f32 elements through VK_EXT_shader_atomic_float's
// atomicAdd; otherwise 32-bit integers, s32 and u32 alike (two's
// complement adds the same bits).
#version 450
#if ELEMENT_F32
#extension GL_EXT_shader_atomic_float : require
#define ELEMENT float
#else
#define ELEMENT uint
#endif

// Constant 0: the workgroup size (the runtime gives every kernel its
// workgroup size as constant 0).
layout(local_size_x_id = 0) in;

// library_scatter.h's ScatterAddShape, constants 1 on: constants rather
// than push constants, so that the driver folds them (a division by a row
// of 16 becomes a shift; a CPU device's SIMD lanes divide one at a time).
layout(constant_id = 1) const uint OUTPUTS = 0;  // elements of the operand and the output
layout(constant_id = 2) const uint UPDATES = 0;  // elements of the updates
layout(constant_id = 3) const uint WINDOW = 1;   // elements of one row: what one index moves
layout(constant_id = 4) const uint ROWS = 0;     // rows of the operand: an index in [0, ROWS) fits

// Each launch's mode.
layout(push_constant) uniform ScatterAddPass { uint mode; } p;

layout(std430, set = 0, binding = 0) readonly buffer Operand { ELEMENT d[]; } operand;
layout(std430, set = 0, binding = 1) readonly buffer Indices { int d[]; } indices;
layout(std430, set = 0, binding = 2) readonly buffer Updates { ELEMENT d[]; } updates;
layout(std430, set = 0, binding = 3) buffer Output { ELEMENT d[]; } result;

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (p.mode == 0u) {
    for (uint i = gl_GlobalInvocationID.x; i < OUTPUTS; i += step) result.d[i] = operand.d[i];
    return;
  }
  for (uint u = gl_GlobalInvocationID.x; u < UPDATES; u += step) {
    const uint row = u / WINDOW;
    const int index = indices.d[row];
    if (index < 0 || uint(index) >= ROWS) continue;
    atomicAdd(result.d[uint(index) * WINDOW + (u - row * WINDOW)], updates.d[u]);
  }
}
