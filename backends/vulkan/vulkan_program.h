// A module compiled for the Vulkan backend: the shared step program
// (core/lowering/step_program.h) plus, per kernel, its GLSL (kept for
// dumps and errors) and its SPIR-V; each kernel description's grid is
// VulkanKernelGrid's.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/vulkan/glsl_kernel_emitter.h"
#include "backends/vulkan/library_shaders.h"
#include "backends/vulkan/shader_features.h"
#include "backends/vulkan/user_op_shaders.h"
#include "core/lowering/step_lowering.h"
#include "core/lowering/whole_loop_plan.h"

namespace kiln::vulkan {

class KernelCache;

struct CompiledShader {
  // A generated kernel's GLSL; for a library kernel, its description
  // (library_kernels.h).
  GlslKernel glsl;
  std::vector<uint32_t> spirv;
  // The library shader the kernel runs, if any, and its specialization
  // constants 1, 2, ... (0 is the workgroup size).
  std::optional<LibraryShader> library;
  std::vector<uint32_t> specialization;
};

// A while loop that runs whole on the device (glsl_whole_loop.h): its
// step and slots, its shader, and the trips one dispatch runs at most.
struct VulkanWholeLoop {
  WholeLoop loop;
  CompiledShader shader;
  int64_t trips_per_launch = 0;
};

struct VulkanProgram : StepProgram {
  std::vector<CompiledShader> shaders;   // shaders[step.kernel]
  std::vector<UserOpDispatch> user_ops;  // registered ops' shaders: user_ops[step.call]
  std::vector<VulkanWholeLoop> whole_loops;
};

// Whether programs compiled now run their small loops whole: true unless
// KILN_VULKAN_WHOLE_LOOPS is "0" or "off" (every loop then runs step by
// step from the host, reading its predicate back each trip);
// INVALID_ARGUMENT naming the accepted values for anything else but "1",
// "on" or unset.
StatusOr<bool> VulkanWholeLoopsEnabled();

// The grid a kernel is dispatched with: workgroups of kGlslWorkgroupSize
// invocations (or the kernel's own workgroup_size: its local size) along
// x, one invocation per output element,
// at most kGlslMaxWorkgroups (the shader then strides); a device with a
// lower workgroup-count limit caps it again at dispatch.
KernelGrid VulkanKernelGrid(const GlslKernel& kernel);

// The rules the shared device lowering follows on a device with `features`:
// a kernel is what the GLSL generator can emit for it, and slots are aligned
// for storage-buffer binding offsets (`offset_alignment`, the device's
// minStorageBufferOffsetAlignment).
StepLoweringRules VulkanLoweringRules(const ShaderFeatures& features, uint64_t offset_alignment);

// Runs the core passes (fusing what the generator accepts), lowers the
// module and compiles every kernel to SPIR-V: a library shader's where one
// takes the kernel (PlanLibraryKernel), else the kernel's generated GLSL. UNIMPLEMENTED names the first
// op that cannot run on such a device; `dump_dir`, when set, receives each
// kernel's GLSL as STEM.KERNEL.comp. With `cache`, a kernel's SPIR-V comes
// from there when it holds it, and is stored there when compiled.
StatusOr<std::unique_ptr<VulkanProgram>> CompileForVulkan(
    const Module& module, const ShaderFeatures& features, uint64_t offset_alignment, int optimization_level,
    const std::string& dump_dir = "", const std::string& dump_stem = "", KernelCache* cache = nullptr);
// The same with rules made before, by VulkanLoweringRules(features, ...):
// a backend makes them once per device (the emittable table in them costs
// milliseconds to build), not once per compile.
StatusOr<std::unique_ptr<VulkanProgram>> CompileForVulkan(
    const Module& module, const StepLoweringRules& rules, const ShaderFeatures& features,
    int optimization_level, const std::string& dump_dir = "", const std::string& dump_stem = "",
    KernelCache* cache = nullptr);

}  // namespace kiln::vulkan
