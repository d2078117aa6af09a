// A Vulkan program made ready on one device: a compute pipeline per kernel
// and its constants in storage buffers. Execute records the step sequences
// (core/lowering/step_runner.h) into one command list per execution,
// submitting early only where the host must read a loop predicate (a small
// loop runs whole, one dispatch for thousands of trips: glsl_whole_loop.h),
// a branch selector or an outfeed, and returns when the results are ready.
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "backends/vulkan/vulkan_array.h"
#include "backends/vulkan/vulkan_kernel.h"
#include "backends/vulkan/vulkan_program.h"
#include "core/backend.h"
#include "core/interpreter/eval_context.h"

namespace kiln::vulkan {

// With KILN_VULKAN_VALIDATION=1, INTERNAL listing what the validation layer
// reported since the last call, naming `during`; OK otherwise. Tests run
// with validation on, so any message fails the call that caused it.
Status ValidationVerdict(std::string_view during);

class VulkanExecutable : public Executable {
 public:
  // Creates the pipelines (INTERNAL naming the kernel when the driver
  // refuses one) and uploads the constants. With `cache`, the pipelines go
  // through its pipeline cache, whose data is saved to disk after.
  static StatusOr<std::unique_ptr<VulkanExecutable>> Load(std::shared_ptr<const VulkanProgram> program,
                                                          kiln::Device* device,
                                                          std::shared_ptr<Device> vulkan,
                                                          std::shared_ptr<interpreter::HostQueues> queues,
                                                          KernelCache* cache = nullptr);

  const std::vector<Shape>& parameter_leaves() const override { return program_->parameter_leaves; }
  const std::vector<Shape>& result_leaves() const override { return program_->result_leaves; }
  StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> Execute(std::span<DeviceBuffer* const> arguments,
                                                               const ExecuteOptions& options) override;

 private:
  class StepExecutor;
  VulkanExecutable(std::shared_ptr<const VulkanProgram> program, kiln::Device* device,
                   std::shared_ptr<Device> vulkan, std::shared_ptr<interpreter::HostQueues> queues)
      : program_(std::move(program)),
        device_(device),
        vulkan_(std::move(vulkan)),
        queues_(std::move(queues)) {}

  std::shared_ptr<const VulkanProgram> program_;
  kiln::Device* device_;
  std::shared_ptr<Device> vulkan_;
  std::shared_ptr<interpreter::HostQueues> queues_;
  std::vector<std::shared_ptr<Kernel>> kernels_;         // per program kernel
  std::vector<std::shared_ptr<Kernel>> user_ops_;        // per program user_ops entry
  std::vector<std::shared_ptr<Buffer>> user_op_frames_;  // per user_ops entry: its call frame, or null
  std::vector<std::shared_ptr<Buffer>> constants_;       // per program constant
  std::vector<std::shared_ptr<Kernel>> loop_kernels_;    // per program whole_loops entry
  // A whole loop's index in program_->whole_loops, by the loop's step.
  std::unordered_map<const ProgramStep*, size_t> whole_loop_of_;
};

}  // namespace kiln::vulkan
