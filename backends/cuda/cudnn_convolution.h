// Convolutions through cuDNN's legacy API (cudnnConvolutionForward) where
// cuDNN covers them: 2-D and 3-D, the input and output both NCHW-like
// (batch, feature, spatial...) or both NHWC-like (batch, spatial...,
// feature) and the filter in the same arrangement (out, in, spatial...) or
// (out, spatial..., in), so the descriptors state the arrays as they lie;
// f32, f16 or bf16 throughout with f32 sums (f32 in FMA math, no TF32, as
// f32 dots are); window strides, window dilation, symmetric non-negative
// padding, feature groups, and a window reversed along every spatial
// dimension (CUDNN_CONVOLUTION) or none (CUDNN_CROSS_CORRELATION). The rest
// (base dilation, batch groups, asymmetric or negative padding, other
// layouts such as JAX's HWIO filters, mixed types) runs as Kiln's implicit
// GEMM (convolution_gemm_emitter.h). This is the compile-time half; the
// run-time half, which makes the descriptors and chooses the algorithm once
// per loaded convolution, is cudnn_convolution_runner.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/cuda/cudnn_library.h"
#include "core/ir.h"
#include "core/status.h"

namespace kiln::cuda {

struct CudnnConvolutionPlan {
  cudnnDataType_t data_type = CUDNN_DATA_FLOAT;
  // The input and output as cuDNN's (N, C, spatial...) with element strides.
  std::vector<int> input_dims, input_strides;
  std::vector<int> output_dims, output_strides;
  // The filter as (K, C / groups, spatial...), laid out per `filter_format`.
  std::vector<int> filter_dims;
  cudnnTensorFormat_t filter_format = CUDNN_TENSOR_NCHW;
  std::vector<int> padding, strides, dilations;  // per spatial dimension
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  int groups = 1;
  cudnnMathType_t math = CUDNN_FMA_MATH;

  std::string ToString() const;  // for errors and test messages
};

// The cuDNN convolution that computes `convolution`, or UNIMPLEMENTED
// saying why cuDNN does not take it (it then runs as Kiln's kernel).
StatusOr<CudnnConvolutionPlan> PlanCudnnConvolution(const Instruction& convolution);

}  // namespace kiln::cuda
