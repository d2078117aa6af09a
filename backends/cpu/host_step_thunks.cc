#include "backends/cpu/host_step_thunks.h"

#include <cstring>
#include <new>
#include <span>
#include <utility>

#include "core/lowering/step_feeds.h"

namespace kiln::cpu {

uint8_t* HostStepRuntime::SlotExecutor::Address(int slot) const {
  const auto index = static_cast<size_t>(slot);
  if (index < program_slots_) return static_cast<uint8_t*>(slots_[index]);
  return added_[index - program_slots_].get();
}

Status HostStepRuntime::SlotExecutor::Launch(const ProgramStep& step) {
  return Internal("cpu: '", step.name, "' is a kernel thunk, not a host step");
}

Status HostStepRuntime::SlotExecutor::Copy(int source, int target, int64_t bytes) {
  return CopyRange(source, 0, target, 0, bytes);
}

Status HostStepRuntime::SlotExecutor::CopyRange(int source, int64_t source_offset, int target,
                                                int64_t target_offset, int64_t bytes) {
  const uint8_t* from = Address(source) + source_offset;
  uint8_t* to = Address(target) + target_offset;
  if (bytes > 0 && from != to) std::memcpy(to, from, static_cast<size_t>(bytes));
  return OkStatus();
}

StatusOr<int> HostStepRuntime::SlotExecutor::AddSlot(int64_t bytes) {
  // Not zeroed: a tape's bytes are written before they are read.
  std::unique_ptr<uint8_t[]> buffer(new (std::nothrow) uint8_t[static_cast<size_t>(bytes)]);
  if (buffer == nullptr) return ResourceExhausted("cpu: cannot allocate ", bytes, " bytes of host memory");
  added_.push_back(std::move(buffer));
  return static_cast<int>(program_slots_ + added_.size() - 1);
}

void HostStepRuntime::SlotExecutor::ReleaseSlot(int slot) {
  added_[static_cast<size_t>(slot) - program_slots_].reset();
}

void HostStepRuntime::SlotExecutor::Bind(int bound, int slot) {
  slots_[static_cast<size_t>(bound)] = Address(slot);
}

Status HostStepRuntime::SlotExecutor::ReadToHost(int slot, void* host, int64_t bytes) {
  if (bytes > 0) std::memcpy(host, Address(slot), static_cast<size_t>(bytes));
  return OkStatus();
}

Status HostStepRuntime::SlotExecutor::WriteFromHost(int slot, const void* host, int64_t bytes) {
  if (bytes > 0) std::memcpy(Address(slot), host, static_cast<size_t>(bytes));
  return OkStatus();
}

SlotCopyThunk::SlotCopyThunk(std::vector<int> sources, std::vector<int> targets, std::vector<int64_t> bytes)
    : Thunk(std::move(sources), std::move(targets)), bytes_(std::move(bytes)) {}

Status SlotCopyThunk::Run(ExecutionContext& context) const {
  for (size_t i = 0; i < outputs_.size(); ++i) {
    const void* from = context.slots[inputs_[i]];
    void* to = context.slots[outputs_[i]];
    if (bytes_[i] > 0 && from != to) std::memcpy(to, from, static_cast<size_t>(bytes_[i]));
  }
  return OkStatus();
}

InfeedThunk::InfeedThunk(Shape shape, std::vector<int> targets, std::vector<int64_t> bytes)
    : Thunk({}, std::move(targets)), shape_(std::move(shape)), bytes_(std::move(bytes)) {}

Status InfeedThunk::Run(ExecutionContext& context) const {
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> arrays,
                        TakeInfeedArrays(context.host_steps->queues(), shape_, outputs_.size(), "cpu"));
  for (size_t i = 0; i < arrays.size(); ++i) {
    const std::span<const uint8_t> raw = arrays[i].raw();
    if (static_cast<int64_t>(raw.size()) != bytes_[i])
      return Internal("cpu: infeed array ", i, " has ", raw.size(), " bytes, expected ", bytes_[i]);
    if (!raw.empty()) std::memcpy(context.slots[outputs_[i]], raw.data(), raw.size());
  }
  return OkStatus();
}

OutfeedThunk::OutfeedThunk(Shape shape, std::vector<int> sources, std::vector<int64_t> bytes)
    : Thunk(std::move(sources), {}), shape_(std::move(shape)), bytes_(std::move(bytes)) {}

Status OutfeedThunk::Run(ExecutionContext& context) const {
  const std::vector<Shape> shapes = FeedArrayShapes(shape_);
  if (shapes.size() != inputs_.size())
    return Internal("cpu: outfeed has ", inputs_.size(), " arrays for ", shapes.size());
  std::vector<Literal> arrays;
  arrays.reserve(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    Literal array(shapes[i]);
    const std::span<uint8_t> raw = array.raw();
    if (static_cast<int64_t>(raw.size()) != bytes_[i])
      return Internal("cpu: outfeed array ", i, " has ", bytes_[i], " bytes, its shape ", raw.size());
    if (!raw.empty()) std::memcpy(raw.data(), context.slots[inputs_[i]], raw.size());
    arrays.push_back(std::move(array));
  }
  return PutOutfeedValue(context.host_steps->queues(), shape_, std::move(arrays), "cpu");
}

TapeThunk::TapeThunk(ProgramStep step) : Thunk(step.sources, step.targets), step_(std::move(step)) {}

Status TapeThunk::Run(ExecutionContext& context) const {
  StepTapes& tapes = context.host_steps->tapes();
  return step_.kind == ProgramStep::Kind::kTapePush ? tapes.Push(step_) : tapes.Pop(step_);
}

}  // namespace kiln::cpu
