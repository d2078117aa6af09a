// MaxWithIndex (frame_ops.h) as a Vulkan compute shader with two results:
// binding 0 is x, binding 1 the values, binding 2 the indices, binding 3
// the call frame kiln.h documents (kiln_user_op_register_device_kernel),
// where it reads x's dims. One invocation per row (the default grid covers
// result 0, one element per row).
#version 450
layout(local_size_x_id = 0) in;

layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Values { float values[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Indices { int indices[]; };
layout(std430, set = 0, binding = 3) readonly buffer Frame { uint words[]; };

uint cell(uint k) { return words[2u * k]; }

void main() {
  const uint row = gl_GlobalInvocationID.x;
  const uint x_dims = cell(5u + 3u);
  const uint rows = cell(x_dims);
  const uint cols = cell(x_dims + 1u);
  if (row >= rows) return;
  // Result 1 (record 2) must be the s32 index vector: else -1, which the test refuses.
  if (cell(3u) != 2u || cell(5u + 4u * 2u) != 4u || cell(5u + 4u * 2u + 1u) != 1u) {
    values[row] = 0.0;
    indices[row] = -1;
    return;
  }
  float best = x[row * cols];
  int at = 0;
  for (uint c = 1u; c < cols; ++c) {
    const float v = x[row * cols + c];
    if (v > best) {
      best = v;
      at = int(c);
    }
  }
  values[row] = best;
  indices[row] = at;
}
