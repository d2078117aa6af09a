// The slice of the cuFFT API Kiln calls, declared here so that Kiln builds
// without a CUDA toolkit (as cublas_api.h does for cuBLAS): a plan is an
// int handle, and only the result codes, transform types and directions
// Kiln names are listed, with the values of NVIDIA's public cufft.h. The
// functions are resolved from libcufft at run time (cufft_library.h).
#pragma once

#include <cstddef>

#include "backends/cuda/cublas_api.h"  // libraryPropertyType
#include "backends/cuda/driver_api.h"

namespace kiln::cuda {

using cufftResult = int;
using cufftHandle = int;
using cufftType = int;

// cufftResult values.
inline constexpr cufftResult CUFFT_SUCCESS = 0;
inline constexpr cufftResult CUFFT_INVALID_PLAN = 1;
inline constexpr cufftResult CUFFT_ALLOC_FAILED = 2;
inline constexpr cufftResult CUFFT_INVALID_TYPE = 3;
inline constexpr cufftResult CUFFT_INVALID_VALUE = 4;
inline constexpr cufftResult CUFFT_INTERNAL_ERROR = 5;
inline constexpr cufftResult CUFFT_EXEC_FAILED = 6;
inline constexpr cufftResult CUFFT_SETUP_FAILED = 7;
inline constexpr cufftResult CUFFT_INVALID_SIZE = 8;
inline constexpr cufftResult CUFFT_INCOMPLETE_PARAMETER_LIST = 10;
inline constexpr cufftResult CUFFT_INVALID_DEVICE = 11;
inline constexpr cufftResult CUFFT_NO_WORKSPACE = 13;
inline constexpr cufftResult CUFFT_NOT_IMPLEMENTED = 14;
inline constexpr cufftResult CUFFT_NOT_SUPPORTED = 16;

// cufftType values: C = complex float, Z = complex double, R = float, D = double.
inline constexpr cufftType CUFFT_R2C = 0x2a;
inline constexpr cufftType CUFFT_C2R = 0x2c;
inline constexpr cufftType CUFFT_C2C = 0x29;
inline constexpr cufftType CUFFT_D2Z = 0x6a;
inline constexpr cufftType CUFFT_Z2D = 0x6c;
inline constexpr cufftType CUFFT_Z2Z = 0x69;

// Directions of a complex-to-complex transform. cuFFT's inverse is not
// scaled: it is N times XLA's IFFT.
inline constexpr int CUFFT_FORWARD = -1;
inline constexpr int CUFFT_INVERSE = 1;

// Every cuFFT entry point Kiln uses: X(field, exported symbol, signature).
// The stream is the driver's CUstream (the runtime's cudaStream_t is the
// same handle); data pointers are device addresses.
#define KILN_CUFFT_FUNCTIONS(X)                                                                       \
  X(GetProperty, "cufftGetProperty", cufftResult (*)(libraryPropertyType, int*))                      \
  X(Create, "cufftCreate", cufftResult (*)(cufftHandle*))                                             \
  X(Destroy, "cufftDestroy", cufftResult (*)(cufftHandle))                                            \
  X(SetAutoAllocation, "cufftSetAutoAllocation", cufftResult (*)(cufftHandle, int))                   \
  X(MakePlanMany, "cufftMakePlanMany",                                                                \
    cufftResult (*)(cufftHandle, int, int*, int*, int, int, int*, int, int, cufftType, int, size_t*)) \
  X(SetWorkArea, "cufftSetWorkArea", cufftResult (*)(cufftHandle, void*))                             \
  X(SetStream, "cufftSetStream", cufftResult (*)(cufftHandle, CUstream))                              \
  X(ExecC2C, "cufftExecC2C", cufftResult (*)(cufftHandle, void*, void*, int))                         \
  X(ExecZ2Z, "cufftExecZ2Z", cufftResult (*)(cufftHandle, void*, void*, int))                         \
  X(ExecR2C, "cufftExecR2C", cufftResult (*)(cufftHandle, void*, void*))                              \
  X(ExecD2Z, "cufftExecD2Z", cufftResult (*)(cufftHandle, void*, void*))                              \
  X(ExecC2R, "cufftExecC2R", cufftResult (*)(cufftHandle, void*, void*))                              \
  X(ExecZ2D, "cufftExecZ2D", cufftResult (*)(cufftHandle, void*, void*))

}  // namespace kiln::cuda
