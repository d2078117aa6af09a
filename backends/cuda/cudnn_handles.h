// The cuDNN handles of one GPU, pooled as the cuBLAS handles are
// (cublas_handles.h): each execution takes one for its convolutions, binds
// it to its stream and gives it back when it ends. cudnnCreate is slow (it
// loads kernels), so handles are kept and destroyed with the pool.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "backends/cuda/cudnn_library.h"
#include "backends/cuda/device_memory.h"

namespace kiln::cuda {

class CudnnHandles {
 public:
  CudnnHandles(const Cudnn& cudnn, std::shared_ptr<DeviceMemory> memory)
      : cudnn_(cudnn), memory_(std::move(memory)) {}
  ~CudnnHandles();
  CudnnHandles(const CudnnHandles&) = delete;
  CudnnHandles& operator=(const CudnnHandles&) = delete;

  const Cudnn& cudnn() const { return cudnn_; }
  const std::shared_ptr<DeviceMemory>& memory() const { return memory_; }

  // A handle of its own for the caller, bound to `stream`. The GPU's
  // context must be current. Thread-safe.
  StatusOr<cudnnHandle_t> Acquire(CUstream stream);
  // Unbinds `handle` from its stream and returns it to the pool.
  void Release(cudnnHandle_t handle);

 private:
  const Cudnn& cudnn_;
  std::shared_ptr<DeviceMemory> memory_;
  std::mutex mutex_;
  std::vector<cudnnHandle_t> free_;
  std::vector<cudnnHandle_t> all_;
};

}  // namespace kiln::cuda
