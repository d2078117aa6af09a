// y[i] = a * x[i] + y[i] for i < n: the runtime tests' basic kernel.
#version 450
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform Parameters {
  float a;
  uint n;
} parameters;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < parameters.n) y[i] = parameters.a * x[i] + y[i];
}
