#include "backends/cpu/cpu_executable.h"

#include <cstring>

#include "backends/cpu/cpu_buffer.h"
#include "backends/cpu/host_step_thunks.h"
#include "backends/cpu/library_thunk.h"

namespace kiln::cpu {
namespace {

constexpr size_t kInlineSlots = 256;

}  // namespace

CpuExecutable::CpuExecutable(std::shared_ptr<const CompiledProgram> program,
                             std::shared_ptr<const HostDevices> devices,
                             std::shared_ptr<const IntraOpThreadPool> pool,
                             std::shared_ptr<interpreter::HostQueues> queues,
                             std::shared_ptr<HostMemoryPool> memory)
    : program_(std::move(program)),
      devices_(std::move(devices)),
      pool_(std::move(pool)),
      queues_(std::move(queues)),
      memory_(std::move(memory)) {}

StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> CpuExecutable::Execute(
    std::span<DeviceBuffer* const> arguments, const ExecuteOptions& options) {
  const CompiledProgram& program = *program_;
  KILN_RETURN_IF_ERROR(options.stop.Check());
  if (arguments.size() != program.parameter_leaves.size()) {
    return InvalidArgument("cpu: the computation takes ", program.parameter_leaves.size(),
                           " argument buffers, got ", arguments.size());
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    const DeviceBuffer* argument = arguments[i];
    if (argument == nullptr) return InvalidArgument("cpu: argument ", i, " is null");
    if (dynamic_cast<const CpuBuffer*>(argument) == nullptr) {
      return InvalidArgument("cpu: argument ", i, " is not a buffer of the cpu backend");
    }
    if (!argument->shape().Compatible(program.parameter_leaves[i])) {
      return InvalidArgument("cpu: parameter ", i, " expects ", program.parameter_leaves[i].ToString(),
                             ", got ", argument->shape().ToString());
    }
  }

  KILN_ASSIGN_OR_RETURN(Device* const device, devices_->ExecutionDevice("cpu", arguments, options));
  std::vector<std::unique_ptr<DeviceBuffer>> results;
  results.reserve(program.result_leaves.size());
  std::vector<CpuBuffer*> result_buffers;
  result_buffers.reserve(program.result_leaves.size());
  for (const Shape& shape : program.result_leaves) {
    std::unique_ptr<CpuBuffer> buffer = CpuBuffer::Allocate(shape, device, *memory_);
    if (buffer == nullptr)
      return ResourceExhausted("cpu: cannot allocate a result of ", DenseByteSize(shape), " bytes");
    result_buffers.push_back(buffer.get());
    results.push_back(std::move(buffer));
  }
  PooledBytes arena;
  if (program.arena_bytes > 0) {
    arena = memory_->Allocate(program.arena_bytes);
    if (arena == nullptr)
      return ResourceExhausted("cpu: cannot allocate ", program.arena_bytes, " bytes of temporaries");
  }

  void* inline_slots[kInlineSlots];
  std::vector<void*> heap_slots;
  void** slots = inline_slots;
  if (program.slots.size() > kInlineSlots) {
    heap_slots.resize(program.slots.size());
    slots = heap_slots.data();
  }
  for (size_t i = 0; i < program.slots.size(); ++i) {
    const Slot& slot = program.slots[i];
    switch (slot.kind) {
      case SlotKind::kArena: slots[i] = arena.get() + slot.index; break;
      case SlotKind::kConstant: slots[i] = const_cast<void*>(slot.constant); break;
      case SlotKind::kParameter:
        slots[i] = static_cast<CpuBuffer*>(arguments[static_cast<size_t>(slot.index)])->data();
        break;
      case SlotKind::kResult: slots[i] = result_buffers[static_cast<size_t>(slot.index)]->data(); break;
      case SlotKind::kBound: slots[i] = nullptr; break;
    }
  }

  LibraryRuntime library(program.library_plan.get(), queues_.get(), options.rng_seed, &options.stop);
  HostStepRuntime host_steps(slots, program.slots.size(), queues_.get());
  ExecutionContext context;
  context.slots = slots;
  context.pool = pool_.get();
  context.library = &library;
  context.host_steps = &host_steps;
  context.stop = &options.stop;
  KILN_RETURN_IF_ERROR(program.sequences.front().Run(context));

  for (size_t r = 0; r < program.result_sources.size(); ++r) {
    void* destination = result_buffers[r]->data();
    const void* source = slots[program.result_sources[r]];
    const int64_t bytes = result_buffers[r]->byte_size();
    if (destination != source && bytes > 0) std::memcpy(destination, source, static_cast<size_t>(bytes));
  }
  return results;
}

}  // namespace kiln::cpu
