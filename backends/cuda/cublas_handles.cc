#include "backends/cuda/cublas_handles.h"

namespace kiln::cuda {
namespace {

LibraryHandlePool<cublasHandle_t>::Calls CublasHandleCalls(const Cublas& cublas) {
  LibraryHandlePool<cublasHandle_t>::Calls calls;
  calls.create = [&cublas]() -> StatusOr<cublasHandle_t> {
    cublasHandle_t handle = nullptr;
    KILN_RETURN_IF_ERROR(Cublas::Check(cublas.api().Create(&handle), "cublasCreate"));
    // The default math mode keeps f32 GEMMs in f32 (no TF32); f16 and bf16
    // results are rounded once from f32 sums, as XLA's dots are, not
    // reduced in the output type when cuBLAS splits the sum.
    Status mode =
        Cublas::Check(cublas.api().SetMathMode(
                          handle, CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION),
                      "cublasSetMathMode");
    if (!mode.ok()) {
      cublas.api().Destroy(handle);
      return mode;
    }
    return handle;
  };
  calls.bind = [&cublas](cublasHandle_t handle, CUstream stream) {
    return Cublas::Check(cublas.api().SetStream(handle, stream), "cublasSetStream");
  };
  calls.destroy = [&cublas](cublasHandle_t handle) { cublas.api().Destroy(handle); };
  return calls;
}

}  // namespace

CublasHandles::CublasHandles(const Cublas& cublas, std::shared_ptr<DeviceMemory> memory)
    : LibraryHandlePool(CublasHandleCalls(cublas), std::move(memory)), cublas_(cublas) {}

}  // namespace kiln::cuda
