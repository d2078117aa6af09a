// One fft instruction's transforms on the cpu backend, through Kiln's own
// FFT (fft_plan.h): every transformed dimension is a set of lines, taken a
// vector's width of lines at a time (neighbouring rows of the last
// dimension, neighbouring columns of the others) into a block where one
// SIMD register holds the same element of each line, transformed there and
// written back; a few long lines go through fft_long_line.h instead. RFFT
// and IRFFT of even length run a complex transform of half the length on
// the even and odd samples packed as one complex line.
// The plans (twiddle factors per length) are built once, when the thunk is.
#pragma once

#include <memory>

#include "core/interpreter/fft.h"

namespace kiln::cpu {

class FftTransform {
 public:
  // Plans for `geometry` (as interpreter::PlanFft gives it).
  static std::unique_ptr<FftTransform> Create(const interpreter::FftGeometry& geometry);
  virtual ~FftTransform() = default;

  // Transforms `input` (the operand's elements) into `output` (the
  // result's); the two must not overlap. Without `parallel_for` it runs on
  // the calling thread. Safe to call from several threads at once.
  virtual void Run(const void* input, void* output,
                   const interpreter::FftParallelFor& parallel_for) const = 0;
};

}  // namespace kiln::cpu
