// The slice of the cuBLAS API Kiln calls, declared here so that Kiln builds
// without a CUDA toolkit (as driver_api.h does for the driver): the handle
// is an opaque pointer, and only the status codes and enum values Kiln
// names are listed, with the values of NVIDIA's public cublas_api.h and
// library_types.h. The functions are resolved from libcublas at run time
// (cublas_library.h).
#pragma once

#include <cstdint>

#include "backends/cuda/driver_api.h"

namespace kiln::cuda {

using cublasStatus_t = int;
using cublasHandle_t = struct cublasContext*;
using cublasOperation_t = int;
using cublasMath_t = int;
using cublasComputeType_t = int;
using cublasGemmAlgo_t = int;
using cudaDataType_t = int;
using libraryPropertyType = int;

// cublasStatus_t values.
inline constexpr cublasStatus_t CUBLAS_STATUS_SUCCESS = 0;
inline constexpr cublasStatus_t CUBLAS_STATUS_NOT_INITIALIZED = 1;
inline constexpr cublasStatus_t CUBLAS_STATUS_ALLOC_FAILED = 3;
inline constexpr cublasStatus_t CUBLAS_STATUS_INVALID_VALUE = 7;
inline constexpr cublasStatus_t CUBLAS_STATUS_ARCH_MISMATCH = 8;
inline constexpr cublasStatus_t CUBLAS_STATUS_MAPPING_ERROR = 11;
inline constexpr cublasStatus_t CUBLAS_STATUS_EXECUTION_FAILED = 13;
inline constexpr cublasStatus_t CUBLAS_STATUS_INTERNAL_ERROR = 14;
inline constexpr cublasStatus_t CUBLAS_STATUS_NOT_SUPPORTED = 15;
inline constexpr cublasStatus_t CUBLAS_STATUS_LICENSE_ERROR = 16;

// cublasOperation_t values.
inline constexpr cublasOperation_t CUBLAS_OP_N = 0;
inline constexpr cublasOperation_t CUBLAS_OP_T = 1;

// cublasMath_t values (flags may be or-ed into the mode).
inline constexpr cublasMath_t CUBLAS_DEFAULT_MATH = 0;
inline constexpr cublasMath_t CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16;

// cublasComputeType_t values.
inline constexpr cublasComputeType_t CUBLAS_COMPUTE_32F = 68;
inline constexpr cublasComputeType_t CUBLAS_COMPUTE_64F = 70;

// cublasGemmAlgo_t: let the library choose.
inline constexpr cublasGemmAlgo_t CUBLAS_GEMM_DEFAULT = -1;

// cudaDataType_t values (library_types.h).
inline constexpr cudaDataType_t CUDA_R_32F = 0;
inline constexpr cudaDataType_t CUDA_R_64F = 1;
inline constexpr cudaDataType_t CUDA_R_16F = 2;
inline constexpr cudaDataType_t CUDA_C_32F = 4;
inline constexpr cudaDataType_t CUDA_C_64F = 5;
inline constexpr cudaDataType_t CUDA_R_16BF = 14;

// libraryPropertyType values, for cublasGetProperty.
inline constexpr libraryPropertyType MAJOR_VERSION = 0;
inline constexpr libraryPropertyType MINOR_VERSION = 1;
inline constexpr libraryPropertyType PATCH_LEVEL = 2;

// Every cuBLAS entry point Kiln uses: X(field, exported symbol, signature).
// The stream is the driver's CUstream (the runtime's cudaStream_t is the
// same handle). Scalars (alpha, beta) are host pointers of the compute
// type's scalar: float for CUBLAS_COMPUTE_32F (two for complex data),
// double for CUBLAS_COMPUTE_64F.
#define KILN_CUBLAS_FUNCTIONS(X)                                                                         \
  X(GetProperty, "cublasGetProperty", cublasStatus_t (*)(libraryPropertyType, int*))                     \
  X(Create, "cublasCreate_v2", cublasStatus_t (*)(cublasHandle_t*))                                      \
  X(Destroy, "cublasDestroy_v2", cublasStatus_t (*)(cublasHandle_t))                                     \
  X(SetStream, "cublasSetStream_v2", cublasStatus_t (*)(cublasHandle_t, CUstream))                       \
  X(SetMathMode, "cublasSetMathMode", cublasStatus_t (*)(cublasHandle_t, cublasMath_t))                  \
  X(GemmEx, "cublasGemmEx",                                                                              \
    cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, \
                       const void*, cudaDataType_t, int, const void*, cudaDataType_t, int, const void*,  \
                       void*, cudaDataType_t, int, cublasComputeType_t, cublasGemmAlgo_t))               \
  X(GemmStridedBatchedEx, "cublasGemmStridedBatchedEx",                                                  \
    cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, \
                       const void*, cudaDataType_t, int, long long, const void*, cudaDataType_t, int,    \
                       long long, const void*, void*, cudaDataType_t, int, long long, int,               \
                       cublasComputeType_t, cublasGemmAlgo_t))

}  // namespace kiln::cuda
