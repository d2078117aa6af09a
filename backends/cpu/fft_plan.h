// A plan for the forward complex DFT of one length, y[k] = sum_j x[j]
// exp(-2 pi i jk/n), run on one line or on a vector of lines at once (see
// fft_lanes.h). Lengths whose prime factors are small are a sequence of
// Stockham passes of radix 8, 4, 2, 3, 5 and any other small prime (each pass
// reads one buffer and writes the other, so no bit-reversal step is
// needed); a length with a large prime factor goes through Bluestein's
// algorithm (a convolution of chirps computed with a plan of a length made
// of 2, 3 and 5 only), so every length costs O(n log n). Inverse transforms
// are forward transforms of the conjugate (the callers conjugate while they
// copy lines in and out). A plan is immutable once built: threads share it.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

#include "backends/cpu/fft_lanes.h"

namespace kiln::cpu::fft::KILN_FFT_ISA {

template <typename T>
class Plan {
 public:
  explicit Plan(int64_t length);
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  int64_t length() const { return length_; }
  // Elements of scratch that Transform needs besides the line itself.
  int64_t work_size() const { return work_size_; }

  // Transforms the `length()` elements at `data`, using `work` (work_size()
  // elements) as the other buffer; returns where the result is: `data` or
  // somewhere in `work`. E is T or Lanes<T>::Vector.
  template <typename E>
  Cx<E>* Transform(Cx<E>* data, Cx<E>* work) const;

 private:
  // One Stockham pass of radix `radix` after passes whose radices multiply
  // to `stride`.
  struct Pass {
    int radix;
    int64_t stride;
    size_t twiddles;  // where its (radix - 1) * stride factors start in twiddles_
    size_t roots;     // primes above 5: where exp(-2 pi i q / radix), q < radix, start
  };
  // Bluestein's algorithm for this length through a plan of length `padded`.
  struct Chirp {
    int64_t padded = 0;
    std::unique_ptr<Plan> convolution;
    std::vector<std::complex<T>> chirp;   // exp(-pi i k^2 / n), k < n
    std::vector<std::complex<T>> kernel;  // the padded conjugate chirp's DFT, over `padded`
  };

  template <typename E>
  void RunPass(const Pass& pass, const Cx<E>* in, Cx<E>* out) const;
  template <typename E>
  Cx<E>* RunChirp(Cx<E>* data, Cx<E>* work) const;

  int64_t length_;
  int64_t work_size_ = 0;
  std::vector<Pass> passes_;
  std::vector<std::complex<T>> twiddles_;
  std::unique_ptr<Chirp> chirp_;  // set when Bluestein's algorithm is used
};

// The smallest length >= `minimum` made of the factors 2, 3 and 5 only.
int64_t SmoothLength(int64_t minimum);

}  // namespace kiln::cpu::fft::KILN_FFT_ISA
