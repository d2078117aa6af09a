// One fused kernel (a kiln::Computation whose parameters are the input
// arrays and whose root is the output array or a tuple of them) rendered as
// a GLSL compute shader. Every invocation computes output elements in a
// grid-stride loop, so any number of workgroups covers the kernel; the
// workgroup size is specialization constant 0. Buffers: binding i < N is
// parameter i (dense, row-major), then one binding per output leaf.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "backends/vulkan/glsl_types.h"
#include "backends/vulkan/shader_features.h"
#include "core/compiler/kernel_description.h"
#include "core/ir.h"

namespace kiln::vulkan {

struct GlslKernel {
  std::string source;          // GLSL 4.50 for Vulkan
  std::string entry = "main";  // GLSL's entry point is always main
  std::string name;            // the entry_name asked for (in the source's first line)
  int input_count = 0;         // bindings 0 .. input_count-1
  int output_count = 0;        // then the output leaves
  bool has_scratch = false;    // one more binding after the outputs: GlslKernelScratchBytes of scratch
  int binding_count = 0;       // input_count + output_count (+ 1 with scratch)
  // Random numbers: the kernel reads a per-launch 64-bit key from push
  // constants (uint lo, hi): RngLaunchKey(seed, launch) from rng_key.h.
  bool takes_rng_key = false;
  int push_constant_bytes = 0;
  int64_t invocations = 0;  // the most output elements of any leaf: what a dispatch must cover
  // An upper bound of the loop iterations one invocation runs, every loop
  // of the shader together (Mesa's lavapipe stops an invocation after
  // 65535): the grid-stride loop's passes when kGlslMaxGridInvocations
  // invocations run, each pass 1 + the body's loops (a loop's trips times
  // those of the loops around it).
  int64_t max_loop_iterations = 0;
  // The op whose loops weigh most, as "reduce f32[] (reduce.3)".
  std::string loop_op;
  // Invocations per workgroup; 0: kGlslWorkgroupSize.
  int64_t workgroup_size = 0;
  // A kernel of several passes (a sort's or topk's, glsl_bitonic_sort.h
  // and glsl_serial_sort.h; a scatter's copy and atomic update,
  // glsl_atomic_scatter.h): dispatched once per launch, in order, each
  // parameter a 32-bit push constant (push_constant_bytes / 4 of them),
  // every launch with `workgroup_size` invocations a workgroup and seeing
  // the previous one's writes. CompileForVulkan puts them in the kernel's
  // description (KernelDescription::launches), which the executable reads.
  // Empty: one dispatch covering `invocations`.
  std::vector<KernelLaunch> launches;
};

// Invocations per workgroup, what every launch uses. 64 is a multiple of
// every subgroup size in use (8 on lavapipe, 32 on NVIDIA and Intel, 64 on
// AMD) and within every device's limits. (The library shaders,
// library_kernels.h, choose their own from the device's limits.)
inline constexpr int64_t kGlslWorkgroupSize = 64;
// The most workgroups a launch runs: enough to fill any current GPU.
inline constexpr int64_t kGlslMaxWorkgroups = 65535;
// The most invocations a launch runs at once; larger kernels loop.
inline constexpr int64_t kGlslMaxGridInvocations = kGlslMaxWorkgroups * kGlslWorkgroupSize;

// A kernel emitted for inlining into a loop shader (glsl_whole_loop.h):
// what the shader's text needs of it. `body` computes output element k_i
// (an int) and stores it; it is run for every k_i below `invocations`, by
// one invocation each.
struct GlslKernelParts {
  GlslPrelude prelude;  // extensions and helper functions
  std::string globals;  // file-scope constants
  std::string body;
  int64_t invocations = 0;
  int64_t loop_iterations = 0;  // loop iterations computing one element
  // Per binding (inputs, then output leaves): the element type its buffer
  // holds, as GlslStorageType stores it.
  std::vector<ElementType> binding_types;
};

// `kernel` emitted for a loop shader: binding i is the buffer block named
// `buffer_names[i]` (which the shader declares), and every name the
// emitter makes up starts with `name_prefix`, so several kernels share one
// file. UNIMPLEMENTED for what a loop shader cannot inline: a sort, top-k,
// atomic scatter, random numbers, or anything EmitGlslKernel refuses.
StatusOr<GlslKernelParts> EmitGlslKernelParts(const Computation& kernel, const ShaderFeatures& features,
                                              std::vector<std::string> buffer_names,
                                              std::string_view name_prefix);

// UNIMPLEMENTED naming the kernel's heaviest op, its iterations and the
// limit when features.max_loop_iterations (0: none) is exceeded.
Status CheckGlslLoopIterations(const GlslKernel& kernel, const ShaderFeatures& features);

// Bytes of the scratch buffer a kernel whose root is `root` binds after its
// outputs on a device with `features` (a sort's or topk's element numbers:
// glsl_bitonic_sort.h, glsl_serial_sort.h); 0 for kernels without scratch.
int64_t GlslKernelScratchBytes(const Instruction& root, const ShaderFeatures& features);

// UNIMPLEMENTED naming the op, its shape and what is missing when the kernel
// holds something this generator does not do or the device lacks a type.
StatusOr<GlslKernel> EmitGlslKernel(const Computation& kernel, const ShaderFeatures& features,
                                    std::string_view entry_name);

// The refusals of EmitGlslKernel without the kernel (what fusion asks per
// instruction).
Status CheckGlslEmittable(const Computation& kernel, const ShaderFeatures& features);

// CheckGlslEmittable of `instruction` alone (its operands as the kernel's
// parameters), emitting it in place: no computation is built. The
// per-instruction check of the Vulkan emittable table (glsl_emittable.h).
Status CheckGlslInstructionEmittable(const Instruction& instruction, const ShaderFeatures& features);

}  // namespace kiln::vulkan
