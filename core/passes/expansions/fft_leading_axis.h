// The one-dimensional discrete Fourier transform that the fft expansion
// (fft.cc) builds from ordinary HLO: along the leading axis of a complex
// array [n, inner], with static shapes only, so that every device backend
// runs it as a few dots and elementwise kernels per stage.
//
// A length up to kLargestDenseLength (or a prime up to
// kLargestDensePrime) is one dot with its DFT matrix. A longer length n is
// split as n = n1 * n2 with n1 its largest factor up to kLargestRadix
// (decimation in time: the n2-point transforms of the n1 interleaved
// subsequences, recursively, then twiddle factors, then one dot with the
// n1-point DFT matrix), which keeps the work O(n log n) and the output in
// natural order without a transpose. A length whose factors are all
// larger primes goes through Bluestein's algorithm: a chirp multiply and a
// circular convolution through power-of-two transforms. Every constant is
// computed in double precision and rounded once to the element type.
#pragma once

#include <cstdint>

#include "core/builder.h"

namespace kiln::fft_expansion {

// Lengths that are one dense DFT-matrix dot.
inline constexpr int64_t kLargestDenseLength = 16;
inline constexpr int64_t kLargestDensePrime = 64;
// The largest factor a Cooley-Tukey stage takes as its dense dot.
inline constexpr int64_t kLargestRadix = 16;

// scale * sum_j x[j, :] * exp(sign * 2 pi i j k / n) for k in [0, n): `x`
// is a `complex_type` (c64 or c128) array [n, inner] with n >= 1; `sign`
// is -1 (forward) or +1 (inverse). The result has x's shape.
Op LeadingAxisDft(Builder& builder, Op x, ElementType complex_type, int64_t n, int64_t inner, int sign,
                  double scale);

}  // namespace kiln::fft_expansion
