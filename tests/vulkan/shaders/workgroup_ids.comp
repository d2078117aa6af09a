// Writes what the shader sees of its grid: out[0] the workgroup size X (a
// specialization constant), out[1 + global linear index] the workgroup's
// linear id, so the host can check that the size and the 2-D grid arrived.
#version 450
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) writeonly buffer Out { uint words[]; };

void main() {
  uint width = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  uint index = gl_GlobalInvocationID.y * width + gl_GlobalInvocationID.x;
  if (index == 0) words[0] = gl_WorkGroupSize.x;
  words[1 + index] = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
}
