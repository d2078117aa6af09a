#include "backends/cpu/host_step_thunks.h"

#include <cstring>
#include <mutex>
#include <new>
#include <span>
#include <utility>

namespace kiln::cpu {
namespace {

// The array leaves of `shape`, in order.
std::vector<Shape> FeedArrayLeaves(const Shape& shape) {
  std::vector<Shape> arrays;
  for (Shape& leaf : shape.Leaves()) {
    if (leaf.IsArray()) arrays.push_back(std::move(leaf));
  }
  return arrays;
}

// The array leaves of `literal`, in order.
void CollectFedArrays(const Literal& literal, std::vector<const Literal*>& leaves) {
  if (literal.shape().IsTuple()) {
    for (const Literal& element : literal.tuple_elements()) CollectFedArrays(element, leaves);
  } else if (literal.shape().IsArray()) {
    leaves.push_back(&literal);
  }
}

// A literal of `shape` from its array leaves in order (consumed from `next`).
StatusOr<Literal> AssembleFeedValue(const Shape& shape, std::vector<Literal>& leaves, size_t& next) {
  if (shape.IsArray()) {
    if (next >= leaves.size()) return Internal("cpu: outfeed ran out of arrays");
    return std::move(leaves[next++]);
  }
  if (!shape.IsTuple()) return Literal(shape);
  std::vector<Literal> elements;
  for (const Shape& element : shape.tuple_shapes()) {
    KILN_ASSIGN_OR_RETURN(Literal part, AssembleFeedValue(element, leaves, next));
    elements.push_back(std::move(part));
  }
  return Literal::Tuple(std::move(elements));
}

}  // namespace

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
  // An empty tuple reads nothing (as the interpreter has it).
  if (shape_.IsTuple() && shape_.tuple_shapes().empty()) return OkStatus();
  interpreter::HostQueues& queues = context.host_steps->queues();
  Literal data;
  {
    std::lock_guard<std::mutex> lock(queues.mutex);
    if (queues.infeed.empty()) {
      return FailedPrecondition(
          "cpu: infeed of ", shape_.ToString(),
          " found the infeed queue empty; queue an array with kiln_client_transfer_to_infeed first");
    }
    if (!queues.infeed.front().shape().Compatible(shape_)) {
      return InvalidArgument("cpu: infeed expects ", shape_.ToString(), " but the queue holds ",
                             queues.infeed.front().shape().ToString());
    }
    data = std::move(queues.infeed.front());
    queues.infeed.pop_front();
  }
  std::vector<const Literal*> leaves;
  CollectFedArrays(data, leaves);
  if (leaves.size() != outputs_.size())
    return Internal("cpu: infeed has ", leaves.size(), " arrays for ", outputs_.size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    const std::span<const uint8_t> raw = leaves[i]->raw();
    if (static_cast<int64_t>(raw.size()) != bytes_[i])
      return Internal("cpu: infeed array ", i, " has ", raw.size(), " bytes, expected ", bytes_[i]);
    if (!raw.empty()) std::memcpy(context.slots[outputs_[i]], raw.data(), raw.size());
  }
  return OkStatus();
}

OutfeedThunk::OutfeedThunk(Shape shape, std::vector<int> sources, std::vector<int64_t> bytes)
    : Thunk(std::move(sources), {}), shape_(std::move(shape)), bytes_(std::move(bytes)) {}

Status OutfeedThunk::Run(ExecutionContext& context) const {
  const std::vector<Shape> shapes = FeedArrayLeaves(shape_);
  if (shapes.size() != inputs_.size())
    return Internal("cpu: outfeed has ", inputs_.size(), " arrays for ", shapes.size());
  std::vector<Literal> leaves;
  leaves.reserve(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    Literal leaf(shapes[i]);
    const std::span<uint8_t> raw = leaf.raw();
    if (static_cast<int64_t>(raw.size()) != bytes_[i])
      return Internal("cpu: outfeed array ", i, " has ", bytes_[i], " bytes, its shape ", raw.size());
    if (!raw.empty()) std::memcpy(raw.data(), context.slots[inputs_[i]], raw.size());
    leaves.push_back(std::move(leaf));
  }
  size_t next = 0;
  KILN_ASSIGN_OR_RETURN(Literal value, AssembleFeedValue(shape_, leaves, next));
  interpreter::HostQueues& queues = context.host_steps->queues();
  std::lock_guard<std::mutex> lock(queues.mutex);
  queues.outfeed.push_back(std::move(value));
  return OkStatus();
}

TapeThunk::TapeThunk(ProgramStep step) : Thunk(step.sources, step.targets), step_(std::move(step)) {}

Status TapeThunk::Run(ExecutionContext& context) const {
  StepTapes& tapes = context.host_steps->tapes();
  return step_.kind == ProgramStep::Kind::kTapePush ? tapes.Push(step_) : tapes.Pop(step_);
}

}  // namespace kiln::cpu
