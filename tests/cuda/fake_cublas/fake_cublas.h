// What the fake cuBLAS (fake_cublas.cc) records of each GEMM it is asked
// for, read by tests through its exported hooks:
//   int kiln_fake_cublas_gemm_count(void)            GEMM calls so far
//   int kiln_fake_cublas_gemm(int i, FakeGemmCall*)  call i (0 when out of range)
//   void kiln_fake_cublas_fail_next(int status)      the next GEMM returns `status`
//   int kiln_fake_cublas_live_handles(void)          handles created, not destroyed
#pragma once

#include <cstdint>

namespace kiln::cuda::fake {

struct FakeGemmCall {
  int batched = 0;  // 1: cublasGemmStridedBatchedEx, 0: cublasGemmEx
  int transa = 0, transb = 0;
  int m = 0, n = 0, k = 0;
  int lda = 0, ldb = 0, ldc = 0;
  long long stride_a = 0, stride_b = 0, stride_c = 0;
  int batch_count = 1;
  int a_type = 0, b_type = 0, c_type = 0, compute_type = 0;
  int math_mode = 0;  // the handle's, at the call
  void* stream = nullptr;
};

using GemmCountHook = int (*)();
using GemmHook = int (*)(int, FakeGemmCall*);
using FailNextHook = void (*)(int);
using LiveHandlesHook = int (*)();

}  // namespace kiln::cuda::fake
