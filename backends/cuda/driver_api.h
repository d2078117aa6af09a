// The slice of the CUDA driver API Kiln calls, declared here so that Kiln
// builds without a CUDA toolkit: handles are opaque pointers, device
// addresses are integers, and only the result codes and enum values Kiln
// names are listed (values as the driver ABI defines them). The functions
// themselves are resolved from libcuda.so.1 at run time (cuda_driver.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = uint64_t;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUjit_option = int;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
inline constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
inline constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
inline constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
inline constexpr CUresult CUDA_ERROR_INVALID_PTX = 218;
inline constexpr CUresult CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;
inline constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;

// CUdevice_attribute values.
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5;
inline constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;

// CUjit_option values for cuModuleLoadDataEx.
inline constexpr CUjit_option CU_JIT_INFO_LOG_BUFFER = 3;
inline constexpr CUjit_option CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
inline constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER = 5;
inline constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;

// Every driver entry point Kiln uses: X(field, exported symbol, signature).
// The exported symbol is the versioned name cuda.h maps the call to (the
// unversioned ones are kept for old-ABI callers and behave differently).
#define KILN_CUDA_DRIVER_FUNCTIONS(X)                                                                        \
  X(Init, "cuInit", CUresult (*)(unsigned))                                                                  \
  X(DriverGetVersion, "cuDriverGetVersion", CUresult (*)(int*))                                              \
  X(GetErrorName, "cuGetErrorName", CUresult (*)(CUresult, const char**))                                    \
  X(GetErrorString, "cuGetErrorString", CUresult (*)(CUresult, const char**))                                \
  X(DeviceGetCount, "cuDeviceGetCount", CUresult (*)(int*))                                                  \
  X(DeviceGet, "cuDeviceGet", CUresult (*)(CUdevice*, int))                                                  \
  X(DeviceGetName, "cuDeviceGetName", CUresult (*)(char*, int, CUdevice))                                    \
  X(DeviceGetAttribute, "cuDeviceGetAttribute", CUresult (*)(int*, int, CUdevice))                           \
  X(DeviceTotalMem, "cuDeviceTotalMem_v2", CUresult (*)(size_t*, CUdevice))                                  \
  X(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult (*)(CUcontext*, CUdevice))                  \
  X(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", CUresult (*)(CUdevice))                         \
  X(CtxSetCurrent, "cuCtxSetCurrent", CUresult (*)(CUcontext))                                               \
  X(CtxSynchronize, "cuCtxSynchronize", CUresult (*)())                                                      \
  X(MemGetInfo, "cuMemGetInfo_v2", CUresult (*)(size_t*, size_t*))                                           \
  X(MemAlloc, "cuMemAlloc_v2", CUresult (*)(CUdeviceptr*, size_t))                                           \
  X(MemFree, "cuMemFree_v2", CUresult (*)(CUdeviceptr))                                                      \
  X(MemcpyHtoD, "cuMemcpyHtoD_v2", CUresult (*)(CUdeviceptr, const void*, size_t))                           \
  X(MemcpyDtoH, "cuMemcpyDtoH_v2", CUresult (*)(void*, CUdeviceptr, size_t))                                 \
  X(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", CUresult (*)(CUdeviceptr, CUdeviceptr, size_t, CUstream))       \
  X(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", CUresult (*)(void*, CUdeviceptr, size_t, CUstream))             \
  X(StreamCreate, "cuStreamCreate", CUresult (*)(CUstream*, unsigned))                                       \
  X(StreamDestroy, "cuStreamDestroy_v2", CUresult (*)(CUstream))                                             \
  X(StreamSynchronize, "cuStreamSynchronize", CUresult (*)(CUstream))                                        \
  X(ModuleLoadDataEx, "cuModuleLoadDataEx",                                                                  \
    CUresult (*)(CUmodule*, const void*, unsigned, CUjit_option*, void**))                                   \
  X(ModuleUnload, "cuModuleUnload", CUresult (*)(CUmodule))                                                  \
  X(ModuleGetFunction, "cuModuleGetFunction", CUresult (*)(CUfunction*, CUmodule, const char*))              \
  X(LaunchKernel, "cuLaunchKernel",                                                                          \
    CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, \
                 void**, void**))

}  // namespace kiln::cuda
