// A shader that declares the call frame's binding as a uniform buffer, not
// the storage buffer kiln.h gives: vulkan_frame_test.c expects the compile
// to refuse it, naming the op.
#version 450
layout(local_size_x_id = 0) in;

layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(std140, set = 0, binding = 2) uniform Frame { uvec4 header; };

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i < header.x) y[i] = x[i];
}
