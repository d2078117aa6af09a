// One fft instruction's transforms on the cpu backend, through Kiln's own
// FFT (fft_plan.h): every transformed dimension is a set of lines, taken a
// vector's width of lines at a time (neighbouring rows of the last
// dimension, neighbouring columns of the others) into a block where one
// SIMD register holds the same element of each line, transformed there and
// written back; a few long lines go through fft_long_line.h instead. RFFT
// and IRFFT of even length run a complex transform of half the length on
// the even and odd samples packed as one complex line.
// The plans (twiddle factors per length) are built once, when the thunk is.
// The kernels are built for AVX2 and for AVX-512 (fft_builds.h); Create
// picks the widest the CPU runs.
#pragma once

#include <memory>

#include "core/interpreter/fft.h"

namespace kiln::cpu {

// Which build of the kernels a transform runs: the widest vectors this CPU
// and this library have (AVX-512 where both have it), or the fallback
// (AVX2; 128-bit vectors in builds without the x86 flags), which tests run
// on every host.
enum class FftKernels { kWidest, kFallback };

class FftTransform {
 public:
  // Plans for `geometry` (as interpreter::PlanFft gives it).
  static std::unique_ptr<FftTransform> Create(const interpreter::FftGeometry& geometry,
                                              FftKernels kernels = FftKernels::kWidest);
  // The build Create picks for `kernels` here: "avx512", "avx2" or "baseline".
  static const char* KernelsName(FftKernels kernels);
  virtual ~FftTransform() = default;

  // Transforms `input` (the operand's elements) into `output` (the
  // result's); the two must not overlap. Without `parallel_for` it runs on
  // the calling thread. Safe to call from several threads at once.
  virtual void Run(const void* input, void* output,
                   const interpreter::FftParallelFor& parallel_for) const = 0;
};

}  // namespace kiln::cpu
