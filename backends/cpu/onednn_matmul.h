// f32 x f32 -> f32, s8 x s8 -> s32 and bf16 x bf16 -> f32 (f16 x f16 -> f32)
// matrix products (DotThunk's batched
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
// bf16 and f16 products run here only where oneDNN's implementation uses
// the CPU's instructions for them (AVX512-BF16's vdpbf16ps, AVX512-FP16,
// AMX), which do twice the multiply-adds of an f32 FMA: 1024^3 bf16 x bf16
// -> f32 on one thread took 10.3-13.2 ms (brg:avx512_core_bf16) against
// 22.7-28.5 ms for f32 (2-core AMD EPYC with AVX512-BF16, busy: load 1.9).
// Elsewhere oneDNN widens them to f32 itself ("gemm:jit") and the f32 path
// is as fast. oneDNN 2.6.3 has no f16 matmul on the CPU at all. Each product
// of two bf16 values is exact in f32 and the sums are f32, as on the f32
// path, but in another order, and vdpbf16ps flushes subnormal inputs and
// sums to zero (tests/cpu/runtime_low_precision_dot_test.cc bounds the
// difference).
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
  // Whether a product of f16 or bf16 operands and an f32 result runs here:
  // it is large enough and oneDNN's implementation of the whole product
  // uses the CPU's instructions for the operand type (Create checks each
  // piece it cuts too). Asks oneDNN for a primitive descriptor; makes no
  // primitive.
  static bool RunsLowPrecisionNatively(const DotGeometry& geometry);
  // Null when oneDNN is not built in, the product is small or of other
  // types than f32, s8 x s8 -> s32 or f16/bf16 -> f32, or oneDNN has no fast
  // implementation for it (for f16/bf16: none on the CPU's instructions for
  // them, in any piece). Creates the primitives for a pool of
  // `pool_threads` right away.
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
