// The slice of cuDNN's legacy convolution API Kiln calls, declared here so
// that Kiln builds without cuDNN (as cublas_api.h does for cuBLAS): handles
// and descriptors are opaque pointers, and only the enum values Kiln names
// are listed, with the values of NVIDIA's public cudnn headers (the same in
// cuDNN 8 and 9). Status codes other than success differ between the two
// versions, so Kiln names a failure by cudnnGetErrorString, never by its
// number. The functions are resolved from libcudnn at run time
// (cudnn_library.h); cuDNN 9's libcudnn.so.9 exports them from its
// sub-libraries.
#pragma once

#include <cstddef>

#include "backends/cuda/driver_api.h"

namespace kiln::cuda {

using cudnnStatus_t = int;
using cudnnHandle_t = struct cudnnContext*;
using cudnnTensorDescriptor_t = struct cudnnTensorStruct*;
using cudnnFilterDescriptor_t = struct cudnnFilterStruct*;
using cudnnConvolutionDescriptor_t = struct cudnnConvolutionStruct*;
using cudnnDataType_t = int;
using cudnnTensorFormat_t = int;
using cudnnConvolutionMode_t = int;
using cudnnMathType_t = int;
using cudnnConvolutionFwdAlgo_t = int;

inline constexpr cudnnStatus_t CUDNN_STATUS_SUCCESS = 0;

// cudnnDataType_t values.
inline constexpr cudnnDataType_t CUDNN_DATA_FLOAT = 0;
inline constexpr cudnnDataType_t CUDNN_DATA_HALF = 2;
inline constexpr cudnnDataType_t CUDNN_DATA_BFLOAT16 = 9;

// cudnnTensorFormat_t values: a filter's dimensions as (out, in, spatial...)
// or (out, spatial..., in), row-major.
inline constexpr cudnnTensorFormat_t CUDNN_TENSOR_NCHW = 0;
inline constexpr cudnnTensorFormat_t CUDNN_TENSOR_NHWC = 1;

// cudnnConvolutionMode_t values: CUDNN_CONVOLUTION flips the window
// (XLA's window reversal), CUDNN_CROSS_CORRELATION does not.
inline constexpr cudnnConvolutionMode_t CUDNN_CONVOLUTION = 0;
inline constexpr cudnnConvolutionMode_t CUDNN_CROSS_CORRELATION = 1;

// cudnnMathType_t values: the two tensor-op ones may round f32 to TF32.
inline constexpr cudnnMathType_t CUDNN_DEFAULT_MATH = 0;
inline constexpr cudnnMathType_t CUDNN_TENSOR_OP_MATH = 1;
inline constexpr cudnnMathType_t CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION = 2;
inline constexpr cudnnMathType_t CUDNN_FMA_MATH = 3;

// One answer of cudnnGetConvolutionForwardAlgorithm_v7 (cuDNN's heuristics;
// `time` is not measured) or cudnnFindConvolutionForwardAlgorithmEx (which
// runs each algorithm and measures `time` in milliseconds).
struct cudnnConvolutionFwdAlgoPerf_t {
  cudnnConvolutionFwdAlgo_t algo;
  cudnnStatus_t status;
  float time;
  size_t memory;
  int determinism;
  cudnnMathType_t mathType;
  int reserved[3];
};

// Every cuDNN entry point Kiln uses: X(field, exported symbol, signature).
// The stream is the driver's CUstream (the runtime's cudaStream_t is the
// same handle); alpha and beta are host pointers to float (the compute
// type of every convolution Kiln asks for).
#define KILN_CUDNN_FUNCTIONS(X)                                                                             \
  X(GetVersion, "cudnnGetVersion", size_t (*)())                                                            \
  X(GetErrorString, "cudnnGetErrorString", const char* (*)(cudnnStatus_t))                                  \
  X(Create, "cudnnCreate", cudnnStatus_t (*)(cudnnHandle_t*))                                               \
  X(Destroy, "cudnnDestroy", cudnnStatus_t (*)(cudnnHandle_t))                                              \
  X(SetStream, "cudnnSetStream", cudnnStatus_t (*)(cudnnHandle_t, CUstream))                                \
  X(CreateTensorDescriptor, "cudnnCreateTensorDescriptor", cudnnStatus_t (*)(cudnnTensorDescriptor_t*))     \
  X(SetTensorNdDescriptor, "cudnnSetTensorNdDescriptor",                                                    \
    cudnnStatus_t (*)(cudnnTensorDescriptor_t, cudnnDataType_t, int, const int*, const int*))               \
  X(DestroyTensorDescriptor, "cudnnDestroyTensorDescriptor", cudnnStatus_t (*)(cudnnTensorDescriptor_t))    \
  X(CreateFilterDescriptor, "cudnnCreateFilterDescriptor", cudnnStatus_t (*)(cudnnFilterDescriptor_t*))     \
  X(SetFilterNdDescriptor, "cudnnSetFilterNdDescriptor",                                                    \
    cudnnStatus_t (*)(cudnnFilterDescriptor_t, cudnnDataType_t, cudnnTensorFormat_t, int, const int*))      \
  X(DestroyFilterDescriptor, "cudnnDestroyFilterDescriptor", cudnnStatus_t (*)(cudnnFilterDescriptor_t))    \
  X(CreateConvolutionDescriptor, "cudnnCreateConvolutionDescriptor",                                        \
    cudnnStatus_t (*)(cudnnConvolutionDescriptor_t*))                                                       \
  X(SetConvolutionNdDescriptor, "cudnnSetConvolutionNdDescriptor",                                          \
    cudnnStatus_t (*)(cudnnConvolutionDescriptor_t, int, const int*, const int*, const int*,                \
                      cudnnConvolutionMode_t, cudnnDataType_t))                                             \
  X(SetConvolutionGroupCount, "cudnnSetConvolutionGroupCount",                                              \
    cudnnStatus_t (*)(cudnnConvolutionDescriptor_t, int))                                                   \
  X(SetConvolutionMathType, "cudnnSetConvolutionMathType",                                                  \
    cudnnStatus_t (*)(cudnnConvolutionDescriptor_t, cudnnMathType_t))                                       \
  X(DestroyConvolutionDescriptor, "cudnnDestroyConvolutionDescriptor",                                      \
    cudnnStatus_t (*)(cudnnConvolutionDescriptor_t))                                                        \
  X(GetConvolutionForwardAlgorithmMaxCount, "cudnnGetConvolutionForwardAlgorithmMaxCount",                  \
    cudnnStatus_t (*)(cudnnHandle_t, int*))                                                                 \
  X(FindConvolutionForwardAlgorithmEx, "cudnnFindConvolutionForwardAlgorithmEx",                            \
    cudnnStatus_t (*)(cudnnHandle_t, cudnnTensorDescriptor_t, const void*, cudnnFilterDescriptor_t,         \
                      const void*, cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, void*, int, int*, \
                      cudnnConvolutionFwdAlgoPerf_t*, void*, size_t))                                       \
  X(GetConvolutionForwardAlgorithm_v7, "cudnnGetConvolutionForwardAlgorithm_v7",                            \
    cudnnStatus_t (*)(cudnnHandle_t, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t,                      \
                      cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, int, int*,                     \
                      cudnnConvolutionFwdAlgoPerf_t*))                                                      \
  X(GetConvolutionForwardWorkspaceSize, "cudnnGetConvolutionForwardWorkspaceSize",                          \
    cudnnStatus_t (*)(cudnnHandle_t, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t,                      \
                      cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, cudnnConvolutionFwdAlgo_t,     \
                      size_t*))                                                                             \
  X(ConvolutionForward, "cudnnConvolutionForward",                                                          \
    cudnnStatus_t (*)(cudnnHandle_t, const void*, cudnnTensorDescriptor_t, const void*,                     \
                      cudnnFilterDescriptor_t, const void*, cudnnConvolutionDescriptor_t,                   \
                      cudnnConvolutionFwdAlgo_t, void*, size_t, const void*, cudnnTensorDescriptor_t,       \
                      void*))

}  // namespace kiln::cuda
