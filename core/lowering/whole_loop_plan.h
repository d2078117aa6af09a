// Small while loops run whole on a GPU (the cuda and vulkan backends): a
// loop whose condition and body are a few kernels over small arrays becomes
// one kernel of one workgroup, whose invocations run the condition's steps,
// test the predicate and run the body's steps trip after trip on the
// device, instead of a launch per kernel and a read-back of the predicate
// per trip. This file is what the backends share: which loops qualify, the
// steps of each loop kernel over its pointers, and the status the kernel
// reports through. Each backend emits the kernel in its own language
// (backends/cuda/whole_loop_emitter.h, backends/vulkan/glsl_whole_loop.h)
// and launches it through ProgramStepExecutor::RunLoopTrips.
//
// A launch runs at most a budget of trips, then writes the status, two
// little-endian s64: the bodies it ran, and 1 when the condition turned
// false, 0 when the budget ran out. The host checks the deadline and the
// cancel flag between launches (issue 13), so an endless loop still stops.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/lowering/step_program.h"
#include "core/lowering/step_runner.h"
#include "core/status.h"

namespace kiln {

// Limits of a loop run whole, so that one workgroup of a few hundred
// invocations is the right size for it: every array a step touches has
// 1 .. 4096 elements and every kernel at most 4096 parallel iterations (at
// most 16 per invocation, a few hundred nanoseconds: larger kernels want
// more of the GPU than one multiprocessor, and lose more than the few
// microseconds a launch costs); at most 16 kernels (the inlined code and
// its registers stay small, as the cpu's fused loops,
// backends/cpu/fused_loops.h) and 32 copies per trip.
inline constexpr int64_t kWholeLoopMaxElements = 4096;
inline constexpr int64_t kWholeLoopMaxExtent = 4096;
inline constexpr size_t kWholeLoopMaxKernels = 16;
inline constexpr size_t kWholeLoopMaxCopies = 32;
// Distinct slots a loop kernel takes (cuda: 2 KiB of the 4 KiB of
// parameters a kernel has; vulkan binds fewer, its descriptor limits).
inline constexpr size_t kWholeLoopMaxPointers = 256;
// Trips one launch runs at most before the host checks for a stop: a few
// milliseconds for the small trips this path takes.
inline constexpr int64_t kWholeLoopTripsPerLaunch = 4096;

// One step of a loop kernel, over its pointers: a launch of program kernel
// `kernel` on pointers `buffers` (the kernel's buffers in its order); when
// `kernel` is -1 and `branches` is empty, a copy of `bytes` bytes from
// pointer buffers[0] to pointer buffers[1]; when `branches` is not empty, a
// conditional: the scalar of `selector_type` (pred or s32) at pointer
// `selector` picks the branch whose steps run (pred: true runs branch 0;
// s32: an index out of range runs the last), each branch ending with the
// copies of its results.
struct WholeLoopStep {
  int kernel = -1;
  std::vector<int> buffers;
  int64_t bytes = 0;
  int selector = -1;
  ElementType selector_type = ElementType::kPred;
  std::vector<std::vector<WholeLoopStep>> branches;
};

// What a backend emits for one loop.
struct WholeLoopKernel {
  std::string name;  // the entry's name
  int pointers = 0;  // pointers after the status (and, on cuda, max_trips)
  std::vector<WholeLoopStep> condition;
  int predicate = -1;  // the pointer whose pred (one byte) the condition leaves
  // The body's steps, then the copies of its results into the loop state.
  std::vector<WholeLoopStep> body;
};

// A loop of the program that runs whole: its step, the slot behind each
// of its kernel's pointers, and where the kernel reports.
struct WholeLoop {
  const ProgramStep* step = nullptr;  // a kWhile step of the program's sequences
  std::string entry;                  // the loop kernel's entry name
  std::vector<int> slots;             // pointer i is slots[i]
  int status_slot = -1;               // 2 x s64: bodies run, finished
  int unreported_slot = -1;           // constant {-1, 0}, copied to the status before each launch
};

// The loops of a program that can run whole, and a kernel request for each
// (loops[i] runs kernels[i]; the entry and the status slots are filled in
// by AdoptWholeLoops).
struct WholeLoopPlan {
  std::vector<WholeLoop> loops;
  std::vector<WholeLoopKernel> kernels;
};

// Whether the environment variable `variable` lets programs compiled now
// run their small loops whole: true unless it is "0" or "off";
// INVALID_ARGUMENT naming the accepted values for anything but those, "1",
// "on" or unset.
StatusOr<bool> WholeLoopsEnabled(const char* variable, std::string_view backend);

// Whether program kernel `kernel` (an index of StepProgram::kernels) can be
// inlined into a loop kernel, beyond the shared limits (its arrays' sizes):
// the backend's own rule.
using WholeLoopKernelRule = std::function<bool(int kernel)>;

// The loops of `program` (lowered, its kernels described) that can run
// whole under `rule`, with conditionals among their steps where the
// backend's loop kernels take them (`conditionals`).
WholeLoopPlan PlanWholeLoops(const StepProgram& program, const WholeLoopKernelRule& rule,
                             bool conditionals = false);

// What a loop kernel's status says after a launch with a budget of
// `max_trips` (`reported`: its two s64 as read back): the trips and whether
// the loop finished. INTERNAL naming the backend, the kernel (`entry`) and
// the loop (`loop_name`) when the status is not one a launch can leave
// (never written: -1 trips; a budget not spent yet unfinished: a kernel
// cut short).
StatusOr<StepLoopTrips> LoopTripsReported(const int64_t (&reported)[2], int64_t max_trips,
                                          std::string_view backend, std::string_view entry,
                                          std::string_view loop_name);

// Keeps the planned loops whose kernel was emitted (`entries[i]` is
// loops[i]'s entry name, empty when it could not be) and gives them a status
// slot past the program's scratch (at `alignment`) and the constant the
// host resets it from. Returns the loops kept.
StatusOr<std::vector<WholeLoop>> AdoptWholeLoops(WholeLoopPlan plan, const std::vector<std::string>& entries,
                                                 StepProgram& program, int64_t alignment,
                                                 std::string_view backend);

}  // namespace kiln
