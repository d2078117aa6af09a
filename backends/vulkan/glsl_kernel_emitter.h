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

#include "backends/vulkan/shader_features.h"
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
};

// Bytes of the scratch buffer a kernel whose root is `root` binds after its
// outputs (a sort's or topk's two element-number arrays per row); 0 for
// kernels without scratch.
int64_t GlslKernelScratchBytes(const Instruction& root);

// UNIMPLEMENTED naming the op, its shape and what is missing when the kernel
// holds something this generator does not do or the device lacks a type.
StatusOr<GlslKernel> EmitGlslKernel(const Computation& kernel, const ShaderFeatures& features,
                                    std::string_view entry_name);

// The refusals of EmitGlslKernel without the kernel (what fusion asks per
// instruction).
Status CheckGlslEmittable(const Computation& kernel, const ShaderFeatures& features);

}  // namespace kiln::vulkan
