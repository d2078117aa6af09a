// The GLSL of a scatter whose combiner the device applies with atomics:
// one invocation per update element instead of one per output element
// that visits every update (O(outputs x updates)). One shader, dispatched
// twice (push constant `mode`, a memory barrier between the dispatches):
//   mode 0  every output element gets the operand's element;
//   mode 1  every update element whose window fits combines into the
//           output element it lands on, atomically.
// A combiner that is one 32-bit integer op of its two parameters becomes
// that atomic instruction (atomicAdd, atomicMin, ...), an f32 add becomes
// atomicAdd where the device has shaderBufferFloat32AtomicAdd; any other
// combiner of one 32-bit scalar (f32, s32, u32) is called as a GLSL
// function in a compare-and-swap loop on the element's bits. Duplicate
// indices then combine in whatever order the device runs them: integer
// results are exact (the ops are associative and commutative), float sums
// differ from the sequential order by rounding only. Everything else (64-
// and 16-bit types, variadic scatters, tuple combiners) is not planned here
// and keeps the emitter's per-output-element scatter.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/vulkan/shader_features.h"
#include "core/compiler/kernel_description.h"
#include "core/ir.h"

namespace kiln::vulkan {

enum class ScatterAtomicKind {
  kNone,         // not atomic-able: the per-output-element scatter
  kInstruction,  // one GLSL atomic instruction (AtomicScatterPlan::instruction)
  kCompareSwap,  // the combiner in an atomicCompSwap loop
};

struct AtomicScatterPlan {
  ScatterAtomicKind kind = ScatterAtomicKind::kNone;
  ElementType type = ElementType::kInvalid;  // the operand's, updates' and combiner's
  std::string instruction;                   // kInstruction: atomicAdd, atomicMin, atomicMax, ...
  // The output buffer's element as the shader declares it: the type
  // itself, or uint for a compare-and-swap on f32 (its bits).
  std::string storage_type;
  bool needs_float_atomic_extension = false;  // GL_EXT_shader_atomic_float
};

// How `scatter` combines with atomics on a device with `features`
// (kind kNone when it does not).
AtomicScatterPlan PlanAtomicScatter(const Instruction& scatter, const ShaderFeatures& features);

// The shader's modes, push constant `mode` (32 bits).
inline constexpr int64_t kAtomicScatterCopyMode = 0;
inline constexpr int64_t kAtomicScatterUpdateMode = 1;
inline constexpr int kAtomicScatterPushConstantBytes = 4;

// The push constants' declaration, after the buffers.
std::string AtomicScatterGlobals();

// The value `value` (of the plan's type) as the output buffer stores it.
std::string AtomicScatterStored(const AtomicScatterPlan& plan, const std::string& value);

// Statements combining `value` into the output element `element` (an
// lvalue of the output buffer), each line indented by `indent`. A
// compare-and-swap calls `combine(old, value)`, which the emitter defines.
std::string AtomicScatterCombine(const AtomicScatterPlan& plan, const std::string& element,
                                 const std::string& value, const std::string& combine,
                                 const std::string& indent);

// main(): mode 0 runs `copy_body` once per output element, mode 1
// `update_body` once per update element, each with `int k_i` its linear
// index in a grid-stride loop.
std::string AtomicScatterMain(int64_t outputs, int64_t updates, const std::string& copy_body,
                              const std::string& update_body);

// The two dispatches, in order, `workgroup_size` invocations a workgroup,
// at most kGlslMaxWorkgroups workgroups.
std::vector<KernelLaunch> AtomicScatterLaunches(int64_t outputs, int64_t updates, int64_t workgroup_size);

}  // namespace kiln::vulkan
