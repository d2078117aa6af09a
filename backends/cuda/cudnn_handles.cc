#include "backends/cuda/cudnn_handles.h"

namespace kiln::cuda {
namespace {

LibraryHandlePool<cudnnHandle_t>::Calls CudnnHandleCalls(const Cudnn& cudnn) {
  LibraryHandlePool<cudnnHandle_t>::Calls calls;
  calls.create = [&cudnn]() -> StatusOr<cudnnHandle_t> {
    cudnnHandle_t handle = nullptr;
    KILN_RETURN_IF_ERROR(cudnn.Check(cudnn.api().Create(&handle), "cudnnCreate"));
    return handle;
  };
  calls.bind = [&cudnn](cudnnHandle_t handle, CUstream stream) {
    return cudnn.Check(cudnn.api().SetStream(handle, stream), "cudnnSetStream");
  };
  calls.destroy = [&cudnn](cudnnHandle_t handle) { cudnn.api().Destroy(handle); };
  return calls;
}

}  // namespace

CudnnHandles::CudnnHandles(const Cudnn& cudnn, std::shared_ptr<DeviceMemory> memory)
    : LibraryHandlePool(CudnnHandleCalls(cudnn), std::move(memory)), cudnn_(cudnn) {}

}  // namespace kiln::cuda
