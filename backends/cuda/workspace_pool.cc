#include "backends/cuda/workspace_pool.h"

#include <algorithm>
#include <utility>

namespace kiln::cuda {

StatusOr<DeviceBlock> WorkspacePool::Take(int64_t bytes) {
  DeviceBlock largest;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      auto found =
          std::max_element(free_.begin(), free_.end(),
                           [](const DeviceBlock& a, const DeviceBlock& b) { return a.bytes() < b.bytes(); });
      largest = std::move(*found);
      free_.erase(found);
    }
  }
  if (largest.bytes() >= bytes) return largest;
  return DeviceBlock::Allocate(memory_, bytes);
}

void WorkspacePool::Give(DeviceBlock block) {
  if (block.bytes() == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(std::move(block));
}

}  // namespace kiln::cuda
