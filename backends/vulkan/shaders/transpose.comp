// A transpose that moves the input's minor dimension (library_transpose.h):
// each workgroup copies one TILE x TILE tile through shared memory, reading
// rows along the input's minor dimension `b` and writing rows along the
// output's minor dimension, which is the input's dimension `a`; the other
// (outer) dimensions pick the tile's plane. Both the reads and the writes
// of neighbouring invocations are neighbouring elements. Elements are moved
// as raw unsigned words of their width (ELEMENT_BYTES: 1, 2, 4, 8 or 16), so
// a device needs no arithmetic on the type, only its storage.
#version 450
#if ELEMENT_BYTES == 1
#extension GL_EXT_shader_8bit_storage : require
#define ELEMENT uint8_t
#define TILE_ELEMENT uint
#define LOAD(x) uint(x)
#define STORE(x) uint8_t(x)
#elif ELEMENT_BYTES == 2
#extension GL_EXT_shader_16bit_storage : require
#define ELEMENT uint16_t
#define TILE_ELEMENT uint
#define LOAD(x) uint(x)
#define STORE(x) uint16_t(x)
#elif ELEMENT_BYTES == 4
#define ELEMENT uint
#elif ELEMENT_BYTES == 8
#define ELEMENT uvec2
#elif ELEMENT_BYTES == 16
#define ELEMENT uvec4
#else
#error ELEMENT_BYTES must be 1, 2, 4, 8 or 16
#endif
#ifndef TILE_ELEMENT
#define TILE_ELEMENT ELEMENT
#define LOAD(x) (x)
#define STORE(x) (x)
#endif

// Constant 0: TILE * ROWS invocations a workgroup (its layout is 1-D: the
// runtime gives every kernel its workgroup size as constant 0).
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint TILE = 32;  // the tile's edge
layout(constant_id = 2) const uint ROWS = 8;   // tile rows one pass of the workgroup covers

// The outer dimensions the plan can describe, the first outer_count used.
#define MAX_OUTER 4
layout(push_constant) uniform TransposeShape {
  uint extent_a;      // the input dimension that becomes the output's minor one
  uint extent_b;      // the input's minor dimension
  uint in_stride_a;   // input stride of a (b's is 1)
  uint out_stride_b;  // output stride of b (a's is 1)
  uint outer_count;
  uint outer_extent[MAX_OUTER];
  uint outer_in_stride[MAX_OUTER];
  uint outer_out_stride[MAX_OUTER];
} p;

layout(std430, set = 0, binding = 0) readonly buffer Input { ELEMENT d[]; } src;
layout(std430, set = 0, binding = 1) writeonly buffer Output { ELEMENT d[]; } dst;

// One column of padding: a column of the tile (what the writes read) falls
// in different banks rather than all in one.
shared TILE_ELEMENT tile[TILE * (TILE + 1)];

// Workgroup (x, y, z) copies tile x along b and y along a of plane z: the
// grid, not divisions (which a CPU device's SIMD lanes cannot do at once),
// places the tile.
void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint column = t % TILE;
  const uint first_row = t / TILE;
  const uint a0 = gl_WorkGroupID.y * TILE;
  const uint b0 = gl_WorkGroupID.x * TILE;
  uint plane = gl_WorkGroupID.z;
  uint in_base = 0;
  uint out_base = 0;
  for (uint i = 0; i < p.outer_count; ++i) {
    const uint index = plane % p.outer_extent[i];
    plane /= p.outer_extent[i];
    in_base += index * p.outer_in_stride[i];
    out_base += index * p.outer_out_stride[i];
  }
  for (uint row = first_row; row < TILE; row += ROWS) {
    const uint a = a0 + row;
    const uint b = b0 + column;
    if (a < p.extent_a && b < p.extent_b) tile[row * (TILE + 1) + column] = LOAD(src.d[in_base + a * p.in_stride_a + b]);
  }
  barrier();
  for (uint row = first_row; row < TILE; row += ROWS) {
    const uint b = b0 + row;
    const uint a = a0 + column;
    if (a < p.extent_a && b < p.extent_b) dst.d[out_base + b * p.out_stride_b + a] = STORE(tile[column * (TILE + 1) + row]);
  }
}
