// The seed's ZeroOut with preserve_index as a Vulkan compute shader, in the
// frame kiln.h documents for a registered op's SPIR-V kernel: binding 0 is
// the argument, binding 1 the result; the push constants hold each buffer's
// element count, then the op's int attribute.
#version 450
layout(local_size_x_id = 0) in;

layout(std430, set = 0, binding = 0) readonly buffer ToZero { int to_zero[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Zeroed { int zeroed[]; };

layout(push_constant) uniform Frame {
  uint to_zero_count;
  uint zeroed_count;
  int preserve_index;
};

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= zeroed_count) return;
  zeroed[i] = int(i) == preserve_index ? to_zero[i] : 0;
}
