// Small while loops run whole on the GPU (issue 15, issue 19's loops): a
// loop whose condition and body are a few kernels over small arrays is one
// kernel of one block, whose threads run the condition's steps, test the
// predicate and run the body's steps trip after trip on the device, instead
// of a launch per kernel and a read-back of the predicate per trip.
//
// The loop kernel's ABI: `void name(ptr status, i64 max_trips, ptr p0, ...,
// ptr pN-1)`, launched as one block of kThreadsPerBlock threads. The p_i
// are the addresses of the slots the loop's steps use (WholeLoop::slots);
// every step is a kernel (its iteration function inlined, its parallel
// iterations spread over the block's threads) or a copy, and a block
// barrier follows each, so a step sees what the last one wrote. A launch
// runs at most `max_trips` trips, then thread 0 writes status[0] = the
// bodies it ran and status[1] = 1 when the condition turned false, 0 when
// the trip budget ran out. The host checks the deadline and the cancel
// flag between launches (issue 13), so an endless loop still stops.
//
// KILN_CUDA_WHOLE_LOOPS=0 (read when a program is compiled) turns this off:
// every loop then runs step by step from the host, as before.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/lowering/step_program.h"
#include "core/status.h"

namespace kiln::cuda {

// Limits of a loop run whole, so that one block of 256 threads is the
// right size for it: every array a step touches has 1 .. 4096 elements
// and every kernel at most 4096 parallel iterations (at most 16 per
// thread, a few hundred nanoseconds: larger kernels want more of the GPU
// than one SM, and lose more than the ~5 us a launch costs); at most 16
// kernels (the inlined code and its registers stay small, as the cpu's
// fused loops, backends/cpu/fused_loops.h) and 32 copies per trip.
inline constexpr int64_t kWholeLoopMaxElements = 4096;
inline constexpr int64_t kWholeLoopMaxExtent = 4096;
inline constexpr size_t kWholeLoopMaxKernels = 16;
inline constexpr size_t kWholeLoopMaxCopies = 32;
// Distinct slots a loop kernel takes: 2 KiB of the 4 KiB of parameters a
// kernel has.
inline constexpr size_t kWholeLoopMaxPointers = 256;
// Trips one launch runs at most before the host checks for a stop: a few
// milliseconds for the small trips this path takes.
inline constexpr int64_t kWholeLoopTripsPerLaunch = 4096;

// One step of a loop kernel, over its pointer parameters: a launch of
// program kernel `kernel` on pointers `buffers` (the kernel's buffers in
// its order), or, when `kernel` is -1, a copy of `bytes` bytes from pointer
// buffers[0] to pointer buffers[1].
struct WholeLoopStep {
  int kernel = -1;
  std::vector<int> buffers;
  int64_t bytes = 0;
};

// What the PTX compiler emits for one loop (whole_loop_emitter.h).
struct WholeLoopKernel {
  std::string name;  // the .entry name
  int pointers = 0;  // pointer parameters after status and max_trips
  std::vector<WholeLoopStep> condition;
  int predicate = -1;  // the pointer whose pred (one byte) the condition leaves
  // The body's steps, then the copies of its results into the loop state.
  std::vector<WholeLoopStep> body;
};

// A loop of the program that runs whole: its step, the slot behind each
// of its kernel's pointers, and where the kernel reports.
struct WholeLoop {
  const ProgramStep* step = nullptr;  // a kWhile step of the program's sequences
  std::string entry;                  // the loop kernel's .entry name
  std::vector<int> slots;             // pointer i is the address of slots[i]
  int status_slot = -1;               // 2 x s64: bodies run, finished
  int unreported_slot = -1;           // constant {-1, 0}, copied to the status before each launch
};

// Whether programs compiled now run their small loops whole: true unless
// KILN_CUDA_WHOLE_LOOPS is "0" or "off"; INVALID_ARGUMENT naming the
// accepted values for anything but those, "1", "on" or unset.
StatusOr<bool> WholeLoopsEnabled();

// The loops of `program` (lowered, its kernels described) that can run
// whole, and a kernel request for each (loops[i] runs kernels[i]; the
// entry and the status slots are filled in by AdoptWholeLoops).
struct WholeLoopPlan {
  std::vector<WholeLoop> loops;
  std::vector<WholeLoopKernel> kernels;
};
WholeLoopPlan PlanWholeLoops(const StepProgram& program);

// Keeps the planned loops whose kernel was emitted (`entries[i]` is
// loops[i]'s .entry name, empty when it could not be: whole_loop_emitter.h)
// and gives them a status slot past the program's scratch and the constant
// the host resets it from. Returns the loops kept.
StatusOr<std::vector<WholeLoop>> AdoptWholeLoops(WholeLoopPlan plan, const std::vector<std::string>& entries,
                                                 StepProgram& program);

}  // namespace kiln::cuda
