// AddTensor (frame_ops.h) as a Vulkan compute shader: y[i] = x[i] +
// addend[i % n], where addend, an f32 tensor attribute of n elements, is
// read from the call frame kiln.h documents (its record, its header, then
// its elements after every other cell). Binding 0 is x, binding 1 y,
// binding 2 the frame; no push constants.
#version 450
layout(local_size_x_id = 0) in;

layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(std430, set = 0, binding = 2) readonly buffer Frame { uint words[]; };

// Cell k's low half: the value of an int64 cell that fits 32 bits.
uint cell(uint k) { return words[2u * k]; }

void main() {
  const uint x_record = 5u;
  const uint addend_record = 5u + 4u * (cell(2u) + cell(3u));  // attribute 0
  const uint i = gl_GlobalInvocationID.x;
  if (i >= cell(x_record + 2u)) return;
  const uint header = cell(addend_record + 3u);
  const uint count = cell(addend_record + 2u);
  // A frame of another layout, or an addend that is not an f32 tensor with
  // elements: NaN everywhere, which the test refuses.
  if (cell(0u) != 1u || cell(4u) != 2u || cell(addend_record) != 7u || count == 0u || cell(header) != 12u) {
    y[i] = uintBitsToFloat(0x7fc00000u);
    return;
  }
  // An f32 tensor's elements are packed, two to a cell: element e is word e.
  const uint elements = cell(header + 3u);
  y[i] = x[i] + uintBitsToFloat(words[2u * elements + i % count]);
}
