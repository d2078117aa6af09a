#include "backends/vulkan/vulkan_program.h"

#include <algorithm>
#include <optional>

#include "backends/vulkan/glsl_emittable.h"
#include "backends/vulkan/kernel_cache.h"
#include "backends/vulkan/library_kernels.h"
#include "backends/vulkan/parallel_compile.h"
#include "backends/vulkan/shader_compiler.h"
#include "core/dump_file.h"

namespace kiln::vulkan {

StepLoweringRules VulkanLoweringRules(const ShaderFeatures& features, uint64_t offset_alignment) {
  StepLoweringRules rules;
  rules.backend = "vulkan";
  // 256 bytes satisfies every desktop GPU's minStorageBufferOffsetAlignment
  // (it is at most 256 by the specification); a larger limit wins.
  rules.slot_alignment = std::max<int64_t>(256, static_cast<int64_t>(offset_alignment));
  rules.check_kernel = [features](const Computation& kernel) { return CheckGlslEmittable(kernel, features); };
  rules.emittable = MakeGlslEmittableTable(features);
  // Each invocation of a GLSL kernel computes its output elements on its
  // own: a row reduction inside an elementwise kernel would be recomputed
  // for every element of the row (softmax took 1.4 s instead of ms).
  rules.fuse_row_reductions = false;
  rules.kernel_scratch_bytes = [features](const Instruction& root) {
    return GlslKernelScratchBytes(root, features);
  };
  rules.library_call = RunsAsUserOpShader;
  return rules;
}

KernelGrid VulkanKernelGrid(const GlslKernel& kernel) {
  return LinearGrid(kernel.invocations,
                    kernel.workgroup_size > 0 ? kernel.workgroup_size : kGlslWorkgroupSize,
                    kGlslMaxWorkgroups);
}

StatusOr<std::unique_ptr<VulkanProgram>> CompileForVulkan(const Module& module,
                                                          const ShaderFeatures& features,
                                                          uint64_t offset_alignment, int optimization_level,
                                                          const std::string& dump_dir,
                                                          const std::string& dump_stem, KernelCache* cache) {
  return CompileForVulkan(module, VulkanLoweringRules(features, offset_alignment), features,
                          optimization_level, dump_dir, dump_stem, cache);
}

StatusOr<std::unique_ptr<VulkanProgram>> CompileForVulkan(const Module& module,
                                                          const StepLoweringRules& rules,
                                                          const ShaderFeatures& features,
                                                          int optimization_level, const std::string& dump_dir,
                                                          const std::string& dump_stem, KernelCache* cache) {
  std::unique_ptr<Module> clone = module.Clone();
  KILN_RETURN_IF_ERROR(RunDevicePasses(*clone, optimization_level, rules));
  auto program = std::make_unique<VulkanProgram>();
  KILN_RETURN_IF_ERROR(LowerToStepProgram(std::move(clone), rules, *program));
  for (const Instruction* call : program->library_calls) {
    KILN_ASSIGN_OR_RETURN(UserOpDispatch dispatch, PlanUserOpDispatch(*call));
    program->user_ops.push_back(std::move(dispatch));
  }
  const FloatControls float_controls{
      {features.preserves_nan_f16, features.preserves_nan_f32, features.preserves_nan_f64},
      {features.preserves_denormals_f16, features.preserves_denormals_f32, features.preserves_denormals_f64}};
  // Emitted in order (cheap, and dump files appear in kernel order), then
  // compiled to SPIR-V side by side: the SPIRV-Tools steps dominate.
  program->shaders.resize(program->kernels.size());
  for (size_t i = 0; i < program->kernels.size(); ++i) {
    const KernelDescription& kernel = program->kernels[i];
    CompiledShader& shader = program->shaders[i];
    if (std::optional<LibraryKernel> library =
            PlanLibraryKernel(*kernel.computation, features, kernel.name)) {
      shader.glsl = std::move(library->description);
      shader.library = library->shader;
      shader.specialization = std::move(library->specialization);
    } else {
      StatusOr<GlslKernel> glsl = EmitGlslKernel(*kernel.computation, features, kernel.name);
      if (!glsl.ok()) return glsl.status().WithContext("emitting kernel " + kernel.name);
      shader.glsl = std::move(glsl).value();
    }
    if (Status loops = CheckGlslLoopIterations(shader.glsl, features); !loops.ok())
      return loops.WithContext("emitting kernel " + kernel.name);
    if (!dump_dir.empty())
      KILN_RETURN_IF_ERROR(
          WriteDumpFile(dump_dir, dump_stem + "." + kernel.name + ".comp", shader.glsl.source));
    program->kernels[i].grid = VulkanKernelGrid(shader.glsl);
    // Every launch has the kernel's workgroup size: a specialization
    // constant of its one pipeline.
    for (const KernelLaunch& launch : shader.glsl.launches) {
      if (launch.grid.workgroup_size != program->kernels[i].grid.workgroup_size)
        return Internal("vulkan: kernel ", kernel.name, " has a launch of workgroup size ",
                        launch.grid.workgroup_size[0], ", its pipeline ",
                        program->kernels[i].grid.workgroup_size[0]);
    }
    program->kernels[i].launches = shader.glsl.launches;
  }
  KILN_RETURN_IF_ERROR(RunCompileTasks(program->shaders.size(), CompileThreads(), [&](size_t i) -> Status {
    CompiledShader& shader = program->shaders[i];
    // Embedded SPIR-V, made ready once per process.
    if (shader.library.has_value()) {
      KILN_ASSIGN_OR_RETURN(shader.spirv, LibraryShaderSpirv(*shader.library, float_controls));
      return OkStatus();
    }
    if (std::optional<std::vector<uint32_t>> cached =
            cache != nullptr ? cache->LoadSpirv(shader.glsl.source, float_controls) : std::nullopt) {
      shader.spirv = std::move(*cached);
      return OkStatus();
    }
    KILN_ASSIGN_OR_RETURN(shader.spirv,
                          CompileGlslToSpirv(shader.glsl.source, program->kernels[i].name, float_controls));
    if (cache != nullptr) cache->StoreSpirv(shader.glsl.source, float_controls, shader.spirv);
    return OkStatus();
  }));
  return program;
}

}  // namespace kiln::vulkan
