// Small while loops run whole on a Vulkan device (the plan shared with
// cuda: core/lowering/whole_loop_plan.h): the loop's condition and body
// kernels are inlined into one compute shader of one workgroup, whose
// invocations run the condition's steps, test the predicate and run the
// body's steps (conditionals among them) trip after trip, with a buffer
// barrier after each step, so a trip costs a few barriers instead of a
// submission and a read-back of the predicate (131 us a trip on an H200
// through the host).
//
// The shader's interface: binding 0 is the status (the plan's two s64, as
// four uints), binding 1 + i the loop's pointer i (WholeLoop::slots[i]);
// one uint of push constants, the most trips the dispatch runs. It is
// dispatched as one workgroup; invocation 0 writes the status at the end.
#pragma once

#include <cstdint>

#include "backends/vulkan/glsl_kernel_emitter.h"
#include "backends/vulkan/shader_features.h"
#include "core/lowering/step_program.h"
#include "core/lowering/whole_loop_plan.h"
#include "core/status.h"

namespace kiln::vulkan {

// Invocations of a loop shader's one workgroup, where the device allows
// them: each kernel's at most 4096 elements are 16 an invocation.
inline constexpr int64_t kGlslLoopWorkgroupSize = 256;

// The loop shader's workgroup on a device with `features`: 256
// invocations where the device allows them; on a CPU device (lavapipe) one
// subgroup, whose lanes are one core's SIMD lanes: the steps' work is then
// the same and a barrier costs next to nothing, where 256 invocations are
// 32 such groups meeting at each (while_tiny's 1000 trips on lavapipe:
// 0.53 ms against 10.3 ms with 256, and 158 ms run from the host).
int64_t GlslLoopWorkgroupSize(const ShaderFeatures& features);

struct GlslWholeLoop {
  GlslKernel shader;  // source, bindings, push constants, workgroup size
  // Trips one dispatch runs at most: kWholeLoopTripsPerLaunch, or fewer
  // where the device stops an invocation after so many loop iterations
  // (Mesa's lavapipe: ShaderFeatures::max_loop_iterations).
  int64_t trips_per_launch = 0;
};

// The loop kernel `loop` (steps over `program`'s kernels) as one GLSL
// shader. UNIMPLEMENTED when a step cannot be inlined (a sort, top-k,
// atomic scatter or random numbers; a copy of a size the device cannot
// store; more buffers than a dispatch binds): the loop then runs from the
// host.
StatusOr<GlslWholeLoop> EmitGlslWholeLoop(const StepProgram& program, const WholeLoopKernel& loop,
                                          const ShaderFeatures& features);

}  // namespace kiln::vulkan
