// The device memory an executable's executions use as a library's
// workspace (cuDNN's, cudnn_convolution_runner.h). An execution takes a
// block at its first call that needs one, uses it for every later call
// while it is large enough, and gives it back when it ends, its stream
// done: sequential executions reuse one block, concurrent ones each have
// their own, and no call allocates once the program has run.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "backends/cuda/device_memory.h"
#include "core/status.h"

namespace kiln::cuda {

class WorkspacePool {
 public:
  explicit WorkspacePool(std::shared_ptr<DeviceMemory> memory) : memory_(std::move(memory)) {}

  // A block of at least `bytes` (> 0): the largest given back when it is
  // large enough, else a new one (and that smaller block, which no
  // execution of this program will want again, goes back to the device
  // memory). Thread-safe.
  StatusOr<DeviceBlock> Take(int64_t bytes);
  // `block`, whose stream's work is done, for a later execution.
  void Give(DeviceBlock block);

 private:
  std::shared_ptr<DeviceMemory> memory_;
  std::mutex mutex_;
  std::vector<DeviceBlock> free_;
};

}  // namespace kiln::cuda
