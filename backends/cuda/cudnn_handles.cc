#include "backends/cuda/cudnn_handles.h"

namespace kiln::cuda {

CudnnHandles::~CudnnHandles() {
  if (all_.empty() || !memory_->MakeCurrent().ok()) return;
  for (cudnnHandle_t handle : all_) cudnn_.api().Destroy(handle);
}

StatusOr<cudnnHandle_t> CudnnHandles::Acquire(CUstream stream) {
  cudnnHandle_t handle = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      handle = free_.back();
      free_.pop_back();
    }
  }
  if (handle == nullptr) {
    KILN_RETURN_IF_ERROR(cudnn_.Check(cudnn_.api().Create(&handle), "cudnnCreate"));
    std::lock_guard<std::mutex> lock(mutex_);
    all_.push_back(handle);
  }
  Status bound = cudnn_.Check(cudnn_.api().SetStream(handle, stream), "cudnnSetStream");
  if (!bound.ok()) {
    Release(handle);
    return bound;
  }
  return handle;
}

void CudnnHandles::Release(cudnnHandle_t handle) {
  // Not left pointing at a stream its execution is about to destroy.
  cudnn_.api().SetStream(handle, nullptr);
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(handle);
}

}  // namespace kiln::cuda
