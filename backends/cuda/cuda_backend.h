// The CUDA backend: one Device per GPU the driver reports. Compiling runs
// the core passes, lowers the module to kernel launches, cuBLAS GEMMs (for
// dots, when cuBLAS loads: cublas_library.h) and loop steps
// (cuda_program.h) and compiles the kernels to PTX for the GPU's compute
// capability; executing runs them on a stream of the execution's own.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "backends/cuda/device_memory.h"
#include "core/backend.h"

namespace kiln::cuda {

// UNAVAILABLE, with the reason, when there is no driver or no GPU.
StatusOr<std::unique_ptr<Backend>> CreateCudaBackend();

// "NAME (sm_XY, N MiB, driver X.Y)" for GPU `ordinal`, as `kiln info` and
// Device::description show it.
StatusOr<std::string> DescribeGpu(const Driver& driver, int ordinal);

}  // namespace kiln::cuda
