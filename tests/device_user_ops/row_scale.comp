// RowScale (frame_ops.h) as a Vulkan compute shader that reads everything
// but its buffers from the call frame kiln.h documents
// (kiln_user_op_register_device_kernel): binding 0 is x, binding 1 y,
// binding 2 the frame; no push constants. y[r][c] = x[r][c] * scale *
// row_weights[r % len], with x's dims, scale and row_weights from the frame.
#version 450
layout(local_size_x_id = 0) in;

layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(std430, set = 0, binding = 2) readonly buffer Frame { uint words[]; };

// Cell k's low half: the value of an int64 cell that fits 32 bits.
uint cell(uint k) { return words[2u * k]; }
// The f32 of a float value whose cells start at cell k.
float float_at(uint k) { return uintBitsToFloat(words[2u * (k + 1u)]); }

void main() {
  const uint buffers = cell(2u) + cell(3u);
  const uint x_record = 5u;
  const uint attrs = 5u + 4u * buffers;
  const uint scale_record = attrs + 4u * 1u;    // attribute 1 (0 is the string tag)
  const uint weights_record = attrs + 4u * 2u;  // attribute 2
  const uint i = gl_GlobalInvocationID.x;
  if (i >= cell(x_record + 2u)) return;
  // A frame of another layout, or not this op's: NaN everywhere, which the test refuses.
  if (cell(0u) != 1u || cell(2u) != 1u || cell(3u) != 1u || cell(4u) != 3u || cell(x_record + 1u) != 2u) {
    y[i] = uintBitsToFloat(0x7fc00000u);
    return;
  }
  const uint cols = cell(cell(x_record + 3u) + 1u);
  const float scale = float_at(cell(scale_record + 3u));
  const uint weights = cell(weights_record + 2u);
  const uint row = i / cols;
  const float w = float_at(cell(weights_record + 3u) + 2u * (row % weights));
  y[i] = x[i] * scale * w;
}
