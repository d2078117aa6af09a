// Running a StepProgram's step sequences: the loops, branches, feeds and
// stop checks are the same on every device, so they live here, and a
// backend supplies only the primitives (ProgramStepExecutor): queue a
// kernel launch or a copy, point a bound slot at another slot's storage,
// add and release slots of the execution's own (the loops' tapes,
// step_tapes.h), and move bytes between a slot and the host once the
// queued work is done.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/interpreter/eval_context.h"
#include "core/lowering/step_program.h"

namespace kiln {

// What a run of a loop's trips on the device did (ProgramStepExecutor::
// RunLoopTrips): how many bodies ran, and whether the condition turned
// false (else the trip budget of one run ran out first).
struct StepLoopTrips {
  int64_t trips = 0;
  bool finished = false;
};

class ProgramStepExecutor {
 public:
  virtual ~ProgramStepExecutor() = default;
  // Queues the kernel launch `step` (kind kLaunch) on its buffers.
  virtual Status Launch(const ProgramStep& step) = 0;
  // Queues the library call `step` (kind kLibraryCall); only a backend
  // whose lowering rules make library calls has them.
  virtual Status CallLibrary(const ProgramStep& step);
  // Queues a copy of `bytes` from slot `source` to slot `target`; they
  // never overlap unless they are the same storage (then nothing happens).
  virtual Status Copy(int source, int target, int64_t bytes) = 0;
  // Queues a copy of `bytes` from slot `source` at byte `source_offset` to
  // slot `target` at `target_offset`; the ranges are inside the slots and
  // never overlap. The default refuses (INTERNAL): a backend without it
  // cannot run tape steps.
  virtual Status CopyRange(int source, int64_t source_offset, int target, int64_t target_offset,
                           int64_t bytes);
  // A new slot of `bytes` (> 0) bytes of device memory for the rest of the
  // execution, numbered after the program's slots; RESOURCE_EXHAUSTED
  // naming the bytes when the device has no room. The default refuses.
  virtual StatusOr<int> AddSlot(int64_t bytes);
  // Gives back an added slot; its memory is freed once the work queued so
  // far (a copy out of it) is done.
  virtual void ReleaseSlot(int slot);
  // From now on slot `bound` (a kBound slot) is the storage of `slot`.
  virtual void Bind(int bound, int slot) = 0;
  // Waits for the queued work, then copies `bytes` of slot `slot` to or
  // from the host.
  virtual Status ReadToHost(int slot, void* host, int64_t bytes) = 0;
  virtual Status WriteFromHost(int slot, const void* host, int64_t bytes) = 0;
  // Whether the backend runs the while loop `step` whole on the device
  // (its condition, predicate test and body in a kernel of its own) rather
  // than step by step from here. The default: no loop.
  virtual bool RunsLoopWhole(const ProgramStep& step) const;
  // For such a loop, whose state is in `step.targets` (bound to its
  // condition and body): runs trips until the condition is false or the
  // backend's trip budget for one run is spent, waits for them, and says
  // which. The runner checks for a stop between runs. The default refuses.
  virtual StatusOr<StepLoopTrips> RunLoopTrips(const ProgramStep& step);
};

// The checks every device executable makes of its arguments before it runs:
// their count, no null, each a buffer of `device` of the backend's own type
// (`is_own`), each of its parameter leaf's shape. INVALID_ARGUMENT naming
// the argument otherwise, and when `requested` (ExecuteOptions::device) is
// set and another device.
Status CheckDeviceArguments(std::span<DeviceBuffer* const> arguments,
                            const std::vector<Shape>& parameter_leaves, const Device* device,
                            bool (*is_own)(const DeviceBuffer&), const std::string& backend,
                            const Device* requested = nullptr);

// Backend::TransferToInfeed and TransferFromOutfeed over `queues` (FIFO);
// an empty outfeed queue is FAILED_PRECONDITION.
Status PushInfeed(interpreter::HostQueues& queues, const Literal& literal);
StatusOr<Literal> PopOutfeed(interpreter::HostQueues& queues, const std::string& backend);

// Runs sequence `sequence` of `program` on `executor`; `backend` names the
// backend in errors. A stop (options.stop) inside a loop names the loop and
// the iteration it reached. The queued work may still be running when this
// returns: the caller waits for it.
Status RunStepSequence(const StepProgram& program, int sequence, ProgramStepExecutor& executor,
                       const ExecuteOptions& options, interpreter::HostQueues& queues,
                       const std::string& backend);

}  // namespace kiln
