// The steps of the shared lowering (core/lowering/step_program.h) that move
// bytes instead of computing, as cpu thunks: infeed and outfeed through the
// backend's host queues (those kiln_client_transfer_to_infeed fills and
// kiln_client_transfer_from_outfeed empties), the pushes and pops of
// reverse-mode loops' tapes through the StepTapes that cuda and vulkan run
// (core/lowering/step_tapes.h), and copies of slots.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/thunk.h"
#include "core/interpreter/eval_context.h"
#include "core/lowering/step_program.h"
#include "core/lowering/step_runner.h"
#include "core/lowering/step_tapes.h"

namespace kiln::cpu {

// What the feed and tape thunks of one execution share: the backend's
// queues and the execution's tapes, released when it ends. The tapes run
// over an executor whose slots are the execution's slot table, then the
// tapes' own buffers.
class HostStepRuntime {
 public:
  // `slots` (the execution's table of `program_slots` slots) and `queues`
  // outlive the runtime.
  HostStepRuntime(void** slots, size_t program_slots, interpreter::HostQueues* queues)
      : executor_(slots, program_slots), queues_(queues) {}

  interpreter::HostQueues& queues() { return *queues_; }
  StepTapes& tapes() { return tapes_; }

 private:
  // Slots are host memory: a copy is a memcpy, an added slot a new buffer.
  class SlotExecutor : public ProgramStepExecutor {
   public:
    SlotExecutor(void** slots, size_t program_slots) : slots_(slots), program_slots_(program_slots) {}
    Status Launch(const ProgramStep& step) override;
    Status Copy(int source, int target, int64_t bytes) override;
    Status CopyRange(int source, int64_t source_offset, int target, int64_t target_offset,
                     int64_t bytes) override;
    StatusOr<int> AddSlot(int64_t bytes) override;
    void ReleaseSlot(int slot) override;
    void Bind(int bound, int slot) override;
    Status ReadToHost(int slot, void* host, int64_t bytes) override;
    Status WriteFromHost(int slot, const void* host, int64_t bytes) override;

   private:
    uint8_t* Address(int slot) const;

    void** slots_;
    size_t program_slots_;
    std::vector<std::unique_ptr<uint8_t[]>> added_;  // slot program_slots_ + i
  };

  SlotExecutor executor_;
  const std::string backend_ = "cpu";  // StepTapes names it in errors
  StepTapes tapes_{executor_, backend_};
  interpreter::HostQueues* queues_;
};

// A kCopy step: `sources[i]` to `targets[i]`, `bytes[i]` each.
class SlotCopyThunk : public Thunk {
 public:
  SlotCopyThunk(std::vector<int> sources, std::vector<int> targets, std::vector<int64_t> bytes);
  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return "copy"; }

 private:
  std::vector<int64_t> bytes_;
};

// A kInfeed step: the next literal of the infeed queue, of `shape`, into
// `targets` (its array leaves, `bytes[i]` each). FAILED_PRECONDITION when
// the queue is empty, INVALID_ARGUMENT when it holds another shape.
class InfeedThunk : public Thunk {
 public:
  InfeedThunk(Shape shape, std::vector<int> targets, std::vector<int64_t> bytes);
  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return "infeed"; }

 private:
  Shape shape_;
  std::vector<int64_t> bytes_;
};

// A kOutfeed step: `sources` (the array leaves of a value of `shape`) onto
// the outfeed queue as one literal.
class OutfeedThunk : public Thunk {
 public:
  OutfeedThunk(Shape shape, std::vector<int> sources, std::vector<int64_t> bytes);
  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return "outfeed"; }

 private:
  Shape shape_;
  std::vector<int64_t> bytes_;
};

// A kTapePush or kTapePop step, run by the execution's StepTapes.
class TapeThunk : public Thunk {
 public:
  explicit TapeThunk(ProgramStep step);
  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override {
    return step_.kind == ProgramStep::Kind::kTapePush ? "tape-push" : "tape-pop";
  }

 private:
  ProgramStep step_;
};

}  // namespace kiln::cpu
