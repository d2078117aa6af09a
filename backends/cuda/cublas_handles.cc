#include "backends/cuda/cublas_handles.h"

namespace kiln::cuda {

CublasHandles::~CublasHandles() {
  if (all_.empty() || !memory_->MakeCurrent().ok()) return;
  for (cublasHandle_t handle : all_) cublas_.api().Destroy(handle);
}

StatusOr<cublasHandle_t> CublasHandles::Acquire(CUstream stream) {
  cublasHandle_t handle = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      handle = free_.back();
      free_.pop_back();
    }
  }
  if (handle == nullptr) {
    KILN_RETURN_IF_ERROR(Cublas::Check(cublas_.api().Create(&handle), "cublasCreate"));
    // The default math mode keeps f32 GEMMs in f32 (no TF32); f16 and bf16
    // results are rounded once from f32 sums, as XLA's dots are, not
    // reduced in the output type when cuBLAS splits the sum.
    Status mode =
        Cublas::Check(cublas_.api().SetMathMode(
                          handle, CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION),
                      "cublasSetMathMode");
    if (!mode.ok()) {
      cublas_.api().Destroy(handle);
      return mode;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    all_.push_back(handle);
  }
  Status bound = Cublas::Check(cublas_.api().SetStream(handle, stream), "cublasSetStream");
  if (!bound.ok()) {
    Release(handle);
    return bound;
  }
  return handle;
}

void CublasHandles::Release(cublasHandle_t handle) {
  // Not left pointing at a stream its execution is about to destroy.
  cublas_.api().SetStream(handle, nullptr);
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(handle);
}

}  // namespace kiln::cuda
