#include "backends/vulkan/vulkan_program.h"

#include <algorithm>
#include <optional>

#include "backends/vulkan/glsl_emittable.h"
#include "backends/vulkan/glsl_whole_loop.h"
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

namespace {

// The program's loops that run whole (glsl_whole_loop.h): planned over its
// generated kernels (a library shader, a kernel of several launches, with
// scratch or a random key stays out), each emitted as a loop shader, and
// given their status slot at `alignment`. A loop whose shader cannot be
// made runs from the host.
Status PlanVulkanWholeLoops(VulkanProgram& program, const ShaderFeatures& features, int64_t alignment) {
  WholeLoopPlan plan = PlanWholeLoops(
      program,
      [&program](int kernel) {
        const CompiledShader& shader = program.shaders[static_cast<size_t>(kernel)];
        return !shader.library.has_value() && shader.glsl.launches.empty() && !shader.glsl.has_scratch &&
               !shader.glsl.takes_rng_key;
      },
      /*conditionals=*/true);
  std::vector<std::string> entries;
  std::vector<GlslWholeLoop> emitted;
  for (const WholeLoopKernel& kernel : plan.kernels) {
    StatusOr<GlslWholeLoop> loop = EmitGlslWholeLoop(program, kernel, features);
    if (!loop.ok() && loop.status().code() != StatusCode::kUnimplemented)
      return loop.status().WithContext("emitting loop kernel " + kernel.name);
    entries.push_back(loop.ok() ? kernel.name : "");
    if (loop.ok()) emitted.push_back(std::move(loop).value());
  }
  KILN_ASSIGN_OR_RETURN(std::vector<WholeLoop> kept,
                        AdoptWholeLoops(std::move(plan), entries, program, alignment, "vulkan"));
  if (kept.size() != emitted.size())
    return Internal("vulkan: ", kept.size(), " loops kept for ", emitted.size(), " loop shaders");
  for (size_t i = 0; i < kept.size(); ++i) {
    VulkanWholeLoop whole;
    whole.loop = std::move(kept[i]);
    whole.shader.glsl = std::move(emitted[i].shader);
    whole.trips_per_launch = emitted[i].trips_per_launch;
    program.whole_loops.push_back(std::move(whole));
  }
  return OkStatus();
}

}  // namespace

StatusOr<bool> VulkanWholeLoopsEnabled() { return WholeLoopsEnabled("KILN_VULKAN_WHOLE_LOOPS", "vulkan"); }

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
  KILN_ASSIGN_OR_RETURN(const bool whole_loops, VulkanWholeLoopsEnabled());
  if (whole_loops) KILN_RETURN_IF_ERROR(PlanVulkanWholeLoops(*program, features, rules.slot_alignment));
  for (const VulkanWholeLoop& loop : program->whole_loops) {
    if (!dump_dir.empty())
      KILN_RETURN_IF_ERROR(
          WriteDumpFile(dump_dir, dump_stem + "." + loop.loop.entry + ".comp", loop.shader.glsl.source));
  }
  // The kernels' shaders, then the loops'.
  const size_t kernel_shaders = program->shaders.size();
  KILN_RETURN_IF_ERROR(RunCompileTasks(
      kernel_shaders + program->whole_loops.size(), CompileThreads(), [&](size_t i) -> Status {
        const bool loop = i >= kernel_shaders;
        CompiledShader& shader = loop ? program->whole_loops[i - kernel_shaders].shader : program->shaders[i];
        const std::string& name =
            loop ? program->whole_loops[i - kernel_shaders].loop.entry : program->kernels[i].name;
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
        KILN_ASSIGN_OR_RETURN(shader.spirv, CompileGlslToSpirv(shader.glsl.source, name, float_controls));
        if (cache != nullptr) cache->StoreSpirv(shader.glsl.source, float_controls, shader.spirv);
        return OkStatus();
      }));
  return program;
}

}  // namespace kiln::vulkan
