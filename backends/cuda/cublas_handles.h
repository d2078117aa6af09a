// The cuBLAS handles of one GPU (library_handle_pool.h), each in the
// default math mode (f32 stays f32: no TF32) with reductions in the compute
// type.
#pragma once

#include <memory>

#include "backends/cuda/cublas_library.h"
#include "backends/cuda/device_memory.h"
#include "backends/cuda/library_handle_pool.h"

namespace kiln::cuda {

class CublasHandles : public LibraryHandlePool<cublasHandle_t> {
 public:
  CublasHandles(const Cublas& cublas, std::shared_ptr<DeviceMemory> memory);

  const Cublas& cublas() const { return cublas_; }

 private:
  const Cublas& cublas_;
};

}  // namespace kiln::cuda
