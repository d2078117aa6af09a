// Dots as cuBLAS GEMMs. A dot_general whose operands and result are
// (batched) row-major matrices, once adjacent dimensions are collapsed,
// needs no data moved: batch dimensions leading, in the same order, on
// both operands (and so on the result); the contracting dimensions one
// adjacent block on each side, paired in order; the free dimensions the
// rest, on one side of that block (before it means the operand is
// transposed). cuBLAS is column-major, and a row-major M x N matrix is its
// column-major N x M transpose, so C = A.B is computed as C' = B'.A' (the
// trick XLA's GPU backend uses): cuBLAS's A is the dot's rhs, its B the
// dot's lhs. Element types: f32, f64, c64, c128 in their own precision
// (no TF32), f16 and bf16 accumulated in f32 (also into an f32 result).
#pragma once

#include <string>

#include "backends/cuda/cublas_api.h"
#include "backends/cuda/cublas_library.h"
#include "core/ir.h"
#include "core/status.h"

namespace kiln::cuda {

// The arguments of one cublasGemmEx (batch == 1) or
// cublasGemmStridedBatchedEx call, in cuBLAS's column-major terms.
struct GemmPlan {
  cublasOperation_t transa = CUBLAS_OP_N;  // of cuBLAS's A: the dot's rhs
  cublasOperation_t transb = CUBLAS_OP_N;  // of cuBLAS's B: the dot's lhs
  int m = 0;                               // the rhs's free extent
  int n = 0;                               // the lhs's free extent
  int k = 0;                               // the contracting extent
  int lda = 0, ldb = 0, ldc = 0;
  long long stride_a = 0, stride_b = 0, stride_c = 0;  // elements between batches
  int batch = 1;
  cudaDataType_t a_type = CUDA_R_32F, b_type = CUDA_R_32F, c_type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  bool complex = false;  // alpha and beta are complex scalars

  std::string ToString() const;  // for errors and test messages
};

// The GEMM that computes `dot`, or UNIMPLEMENTED saying why it is not one
// (the dot then runs as a Kiln kernel).
StatusOr<GemmPlan> PlanGemm(const Instruction& dot);

// Queues `plan` on the stream `handle` is bound to: lhs and rhs are the
// dot's operands, out its result, all dense row-major in device memory.
// An error names the cuBLAS call, the status and the plan.
Status RunGemm(const Cublas& cublas, cublasHandle_t handle, const GemmPlan& plan, CUdeviceptr lhs,
               CUdeviceptr rhs, CUdeviceptr out);

}  // namespace kiln::cuda
