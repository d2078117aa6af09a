// Small while loops run whole on the GPU (issue 15, issue 19's loops; the
// plan shared with vulkan: core/lowering/whole_loop_plan.h): the loop is
// one kernel of one block, whose threads run the condition's steps, test
// the predicate and run the body's steps trip after trip on the device.
//
// The cuda loop kernel's ABI: `void name(ptr status, i64 max_trips, ptr p0,
// ..., ptr pN-1)`, launched as one block of kThreadsPerBlock threads. The
// p_i are the addresses of the slots the loop's steps use (WholeLoop::slots);
// every step is a kernel (its iteration function inlined, its parallel
// iterations spread over the block's threads), a copy, or a conditional
// whose branches are such steps (every thread reads the selector, then all
// take one branch), and a block barrier follows each, so a step sees what
// the last one wrote. A launch
// runs at most `max_trips` trips, then thread 0 writes the status.
//
// KILN_CUDA_WHOLE_LOOPS=0 (read when a program is compiled) turns this off:
// every loop then runs step by step from the host, as before.
#pragma once

#include <string>
#include <vector>

#include "core/lowering/step_program.h"
#include "core/lowering/whole_loop_plan.h"
#include "core/status.h"

namespace kiln::cuda {

using kiln::kWholeLoopMaxCopies;
using kiln::kWholeLoopMaxElements;
using kiln::kWholeLoopMaxExtent;
using kiln::kWholeLoopMaxKernels;
using kiln::kWholeLoopMaxPointers;
using kiln::kWholeLoopTripsPerLaunch;
using kiln::WholeLoop;
using kiln::WholeLoopKernel;
using kiln::WholeLoopPlan;
using kiln::WholeLoopStep;

// Whether programs compiled now run their small loops whole: true unless
// KILN_CUDA_WHOLE_LOOPS is "0" or "off"; INVALID_ARGUMENT naming the
// accepted values for anything but those, "1", "on" or unset.
StatusOr<bool> WholeLoopsEnabled();

// The loops of `program` (lowered, its kernels described) that can run
// whole on cuda, conditionals in them included: kernels with entries of
// their own (sort, top-k, rng) stay out.
WholeLoopPlan PlanWholeLoops(const StepProgram& program);

// Keeps the planned loops whose kernel was emitted (`entries[i]` is
// loops[i]'s .entry name, empty when it could not be: whole_loop_emitter.h)
// and gives them their status slot (AdoptWholeLoops of the shared plan).
StatusOr<std::vector<WholeLoop>> AdoptWholeLoops(WholeLoopPlan plan, const std::vector<std::string>& entries,
                                                 StepProgram& program);

}  // namespace kiln::cuda
