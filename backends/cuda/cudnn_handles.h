// The cuDNN handles of one GPU (library_handle_pool.h).
#pragma once

#include <memory>

#include "backends/cuda/cudnn_library.h"
#include "backends/cuda/device_memory.h"
#include "backends/cuda/library_handle_pool.h"

namespace kiln::cuda {

class CudnnHandles : public LibraryHandlePool<cudnnHandle_t> {
 public:
  CudnnHandles(const Cudnn& cudnn, std::shared_ptr<DeviceMemory> memory);

  const Cudnn& cudnn() const { return cudnn_; }

 private:
  const Cudnn& cudnn_;
};

}  // namespace kiln::cuda
