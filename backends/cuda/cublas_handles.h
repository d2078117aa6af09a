// The cuBLAS handles of one GPU. A handle is bound to one stream at a time
// and must not be used by two threads at once, while executions run
// concurrently, each on a stream of its own: so each execution takes a
// handle from this pool for its library calls, binds it to its stream and
// gives it back when it ends. Handles are made on demand (cublasCreate
// allocates device memory, so they are kept) and destroyed with the pool,
// which the backend and its executables share.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "backends/cuda/cublas_library.h"
#include "backends/cuda/device_memory.h"

namespace kiln::cuda {

class CublasHandles {
 public:
  CublasHandles(const Cublas& cublas, std::shared_ptr<DeviceMemory> memory)
      : cublas_(cublas), memory_(std::move(memory)) {}
  ~CublasHandles();
  CublasHandles(const CublasHandles&) = delete;
  CublasHandles& operator=(const CublasHandles&) = delete;

  const Cublas& cublas() const { return cublas_; }

  // A handle of its own for the caller, bound to `stream`, in the default
  // math mode (f32 stays f32: no TF32) with reductions in the compute type.
  // The GPU's context must be current. Thread-safe.
  StatusOr<cublasHandle_t> Acquire(CUstream stream);
  // Unbinds `handle` from its stream and returns it to the pool.
  void Release(cublasHandle_t handle);

 private:
  const Cublas& cublas_;
  std::shared_ptr<DeviceMemory> memory_;
  std::mutex mutex_;
  std::vector<cublasHandle_t> free_;
  std::vector<cublasHandle_t> all_;
};

}  // namespace kiln::cuda
