// f32 x f32 -> f32 and s8 x s8 -> s32 matrix products (DotThunk's batched
// [batch, M, K] x [batch, K, N], each operand possibly transposed) through
// oneDNN's matmul primitive, on the operands where they lie: transposes are
// described by strides.
//
// s8 products run here only on a CPU with VNNI (AVX-512 or AVX2), where
// oneDNN accumulates each product exactly in s32; its int8 kernels for AVX2
// without VNNI add pairs of products in saturating 16-bit lanes, so there
// the dot thunk widens them to f32 or runs its own integer loop (dot_thunk.h;
// the tests run under ONEDNN_MAX_CPU_ISA=AVX2 too).
// 1024^3 on one thread (Debian 12's oneDNN 2.6.3, 2-core AVX-512 VNNI
// machine, busy): s8 3.8-4.5 ms (brg:avx512_core_vnni), f32 15.4 ms.
//
// Measured on the 2-core AVX-512 machine against Eigen's contraction, square
// f32, two backend threads, median: 141 vs 201-258 us (256, one oneDNN
// thread, see kParallelMultiplyAdds), 0.59-0.61 vs 1.26-1.28 ms (512),
// 4.8-5.0 vs 9.6-9.8 ms (1024), 41 vs 75-77 ms (2048); 64^3 took 3.7 vs
// 5.5 us. Smaller products stay on Eigen, which runs many of them in a batch
// in parallel over the batch (that was not measured against oneDNN).
#pragma once

#include <cstdint>
#include <memory>

#include "backends/cpu/dot_thunk.h"
#include "core/status.h"

namespace kiln::cpu {

class IntraOpThreadPool;

class OneDnnMatmul {
 public:
  // Products with fewer multiply-adds per batch element stay on Eigen.
  static constexpr int64_t kMinimumProduct = int64_t{64} * 64 * 64;

  static bool Available();
  // Whether s8 x s8 -> s32 products run here (exactly): oneDNN is built in
  // and the CPU has VNNI.
  static bool RunsInt8();
  // Null when oneDNN is not built in, the product is small or neither f32
  // nor s8 x s8 -> s32, or oneDNN has no fast implementation for it. Creates the primitives for a
  // pool of `pool_threads` right away.
  static std::unique_ptr<OneDnnMatmul> Create(const DotGeometry& geometry, int pool_threads);
  ~OneDnnMatmul();
  OneDnnMatmul(const OneDnnMatmul&) = delete;
  OneDnnMatmul& operator=(const OneDnnMatmul&) = delete;

  // A product large enough for several threads is cut into pieces (whole
  // batch elements, bands of rows or of columns of the result) that `pool`
  // runs, each a one-thread oneDNN primitive on views of the operands; small
  // ones run on the calling thread. `pool` may be null (one thread). Safe to
  // call from several threads at once. The pointers hold the geometry's
  // operand and result types.
  Status Run(const void* lhs, const void* rhs, void* output, const IntraOpThreadPool* pool) const;

  // How many pieces a pool of `pool_threads` runs the product in.
  size_t pieces(int pool_threads) const;

 private:
  struct Impl;
  explicit OneDnnMatmul(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::cpu
