// Kernels that run a library shader (library_shaders.h) instead of GLSL
// generated for them: the plan of each library shader decides which
// kernels it takes; every other kernel is emitted as GLSL.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "backends/vulkan/glsl_kernel_emitter.h"
#include "backends/vulkan/library_shaders.h"
#include "backends/vulkan/shader_features.h"
#include "core/ir.h"

namespace kiln::vulkan {

struct LibraryKernel {
  LibraryShader shader;
  // Specialization constants 1, 2, ... (constant 0 is the workgroup size,
  // description.workgroup_size).
  std::vector<uint32_t> specialization;
  // What the program and the executable read of any kernel: its bindings,
  // push-constant bytes, workgroup size, loop bound and its one launch,
  // whose parameters are the shader's push constants; `source` is a
  // comment naming the shader and its constants (dumps, messages).
  GlslKernel description;
};

// The library kernel computing `kernel` on a device with `features`;
// nullopt when no library shader takes it.
std::optional<LibraryKernel> PlanLibraryKernel(const Computation& kernel, const ShaderFeatures& features,
                                               std::string_view entry_name);

}  // namespace kiln::vulkan
