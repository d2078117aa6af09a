// The element of Kiln's own FFT (fft_plan, fft_lines): a complex number
// whose real and imaginary parts are each either one scalar (one line) or a
// SIMD vector holding the same element of several lines, so one pass of the
// transform's code works on many lines at once. Only files compiled with
// the same instruction-set flags (see CMakeLists: fft_plan.cc, fft_lines.cc)
// may include this header, as the vector width follows those flags.
#pragma once

#include <complex>

namespace kiln::cpu::fft {

#if defined(__AVX__)
inline constexpr int kVectorBytes = 32;
#else
inline constexpr int kVectorBytes = 16;  // SSE2 (or another ISA's 128-bit vectors)
#endif

// The SIMD vector of T and how many lines it holds.
template <typename T>
struct Lanes;
template <>
struct Lanes<float> {
  typedef float Vector __attribute__((vector_size(kVectorBytes)));
  static constexpr int kCount = kVectorBytes / sizeof(float);
};
template <>
struct Lanes<double> {
  typedef double Vector __attribute__((vector_size(kVectorBytes)));
  static constexpr int kCount = kVectorBytes / sizeof(double);
};

// A complex element of one line (E = T) or of Lanes<T>::kCount lines (E =
// Lanes<T>::Vector), kept as separate real and imaginary parts.
template <typename E>
struct Cx {
  E re;
  E im;
};

template <typename E>
inline Cx<E> operator+(Cx<E> a, Cx<E> b) {
  return {a.re + b.re, a.im + b.im};
}
template <typename E>
inline Cx<E> operator-(Cx<E> a, Cx<E> b) {
  return {a.re - b.re, a.im - b.im};
}
// a times a scalar complex number (a twiddle factor, the same for every lane).
template <typename E, typename T>
inline Cx<E> Times(Cx<E> a, std::complex<T> w) {
  return {a.re * w.real() - a.im * w.imag(), a.re * w.imag() + a.im * w.real()};
}
// a times -i.
template <typename E>
inline Cx<E> TimesMinusI(Cx<E> a) {
  return {a.im, -a.re};
}
template <typename E>
inline Cx<E> Conj(Cx<E> a) {
  return {a.re, -a.im};
}

}  // namespace kiln::cpu::fft
