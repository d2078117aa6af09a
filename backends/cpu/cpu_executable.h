// An executable of the CPU backend: a shared, immutable CompiledProgram plus
// the backend's thread pool and host queues. Execute keeps all its state on
// its own stack and arena, so any number of threads may run it at once.
#pragma once

#include <memory>

#include "backends/cpu/host_memory_pool.h"
#include "backends/cpu/program.h"
#include "backends/cpu/thread_pool.h"
#include "core/backend.h"
#include "core/interpreter/eval_context.h"
#include "core/runtime/host_devices.h"

namespace kiln::cpu {

class CpuExecutable : public Executable {
 public:
  CpuExecutable(std::shared_ptr<const CompiledProgram> program, std::shared_ptr<const HostDevices> devices,
                std::shared_ptr<const IntraOpThreadPool> pool,
                std::shared_ptr<interpreter::HostQueues> queues, std::shared_ptr<HostMemoryPool> memory);

  const std::vector<Shape>& parameter_leaves() const override { return program_->parameter_leaves; }
  const std::vector<Shape>& result_leaves() const override { return program_->result_leaves; }
  StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> Execute(std::span<DeviceBuffer* const> arguments,
                                                               const ExecuteOptions& options) override;

  const CompiledProgram& program() const { return *program_; }

 private:
  std::shared_ptr<const CompiledProgram> program_;
  std::shared_ptr<const HostDevices> devices_;
  std::shared_ptr<const IntraOpThreadPool> pool_;
  std::shared_ptr<interpreter::HostQueues> queues_;
  std::shared_ptr<HostMemoryPool> memory_;
};

}  // namespace kiln::cpu
