// One long line's DFT when there are too few lines to fill the SIMD lanes
// (a single 1-D signal): the line of n = rows * columns points is a matrix
// whose columns are transformed first (a vector's width of neighbouring
// columns at a time), twisted by exp(-2 pi i j2 k1/n), and whose rows are
// then transformed (a vector's width of rows at a time) and written out
// transposed (the four-step algorithm), so the whole transform runs on full
// vectors and over the intra-op threads. Like fft_lanes.h part of each
// build of the kernels.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

#include "backends/cpu/fft_plan.h"
#include "core/interpreter/fft.h"

namespace kiln::cpu::fft::KILN_FFT_ISA {

template <typename T>
class LongLine {
 public:
  // The plan for lines of `length`, or null where this form does not pay:
  // lines too short or too long, or of a length with no split into two
  // factors of at least a vector's width.
  static std::unique_ptr<LongLine> Create(int64_t length);

  LongLine(int64_t rows, int64_t columns);

  int64_t length() const { return rows_ * columns_; }

  // Writes the forward DFT of `source` (conjugated first when `inverse`)
  // to `destination`, scaled by `scale` (and conjugated when `inverse`);
  // the two may be the same line.
  void Run(const std::complex<T>* source, std::complex<T>* destination, bool inverse, T scale,
           const interpreter::FftParallelFor& parallel_for) const;

 private:
  int64_t rows_;     // the length of the column transforms
  int64_t columns_;  // the length of the row transforms
  Plan<T> column_plan_;
  Plan<T> row_plan_;
  // exp(-2 pi i m/n) = high[m >> kLowBits] * low[m & (2^kLowBits - 1)]: two
  // tables small enough to stay in cache, where one of n entries would not.
  static constexpr int kLowBits = 10;
  std::vector<std::complex<T>> low_twiddles_;
  std::vector<std::complex<T>> high_twiddles_;
  // The real and imaginary parts of exp(-2 pi i k1 v/n) for v < the
  // vector's width, row k1 after row k1 - 1 (loaded as one vector each).
  std::vector<T> lane_twiddles_re_;
  std::vector<T> lane_twiddles_im_;

  std::complex<T> Twiddle(int64_t m) const;
};

}  // namespace kiln::cpu::fft::KILN_FFT_ISA
