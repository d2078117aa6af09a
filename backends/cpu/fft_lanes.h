// The element of Kiln's own FFT (fft_plan, fft_lines): a complex number
// whose real and imaginary parts are each either one scalar (one line) or a
// SIMD vector holding the same element of several lines, so one pass of the
// transform's code works on many lines at once. The vector width follows
// the file's instruction-set flags. The FFT's files are compiled once with
// AVX2 and once more with AVX-512 (see CMakeLists), and the two builds must
// not share a name: everything here and in the files that include this
// lives in the namespace KILN_FFT_ISA of its build, which CMakeLists names
// with compile definitions (the AVX-512 build's files have both), not
// after the flags, so that a project built for a wider CPU still links.
// fft_select.cc picks a build when a transform is planned.
#pragma once

#include <complex>
#include <cstddef>
#include <utility>

#if defined(KILN_CPU_FFT_AVX512)
#define KILN_FFT_ISA avx512
#elif defined(KILN_CPU_FFT_AVX2)
#define KILN_FFT_ISA avx2
#else
#define KILN_FFT_ISA baseline
#endif

namespace kiln::cpu::fft::KILN_FFT_ISA {

#if defined(__AVX512F__)
inline constexpr int kVectorBytes = 64;
#elif defined(__AVX__)
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

// ---- Shuffles ------------------------------------------------------------
// Written with __builtin_shufflevector (GCC 12 and Clang) over index
// sequences, so one definition serves every vector width.

// The low (high) halves of a and b interleaved: a0 b0 a1 b1 ... (for a
// vector of real parts and one of imaginary parts: complex numbers).
template <typename V, size_t... kIndex>
inline V InterleaveLowHalves(V a, V b, std::index_sequence<kIndex...>) {
  constexpr size_t kWidth = sizeof...(kIndex);
  return __builtin_shufflevector(a, b, (kIndex % 2 == 0 ? kIndex / 2 : kWidth + kIndex / 2)...);
}
template <typename V, size_t... kIndex>
inline V InterleaveHighHalves(V a, V b, std::index_sequence<kIndex...>) {
  constexpr size_t kWidth = sizeof...(kIndex);
  return __builtin_shufflevector(
      a, b, (kIndex % 2 == 0 ? kWidth / 2 + kIndex / 2 : kWidth + kWidth / 2 + kIndex / 2)...);
}

// The even and the odd lanes of a followed by those of b: the real and the
// imaginary parts of the complex numbers the two vectors hold.
template <typename V, size_t... kIndex>
inline V EvenLanes(V a, V b, std::index_sequence<kIndex...>) {
  return __builtin_shufflevector(a, b, (2 * kIndex)...);
}
template <typename V, size_t... kIndex>
inline V OddLanes(V a, V b, std::index_sequence<kIndex...>) {
  return __builtin_shufflevector(a, b, (2 * kIndex + 1)...);
}

// Transposes a square of vectors: rows[i] holds element j of row i in lane
// j; afterwards rows[j] holds element j of row i in lane i. Each of the
// log2(width) rounds interleaves row p with row p + width/2 (their low
// halves into row 2p, their high halves into row 2p + 1): a round rotates
// the bits of (row, lane) by one, so after log2(width) rounds rows and
// lanes have swapped. Every round uses the same two shuffles, which the
// compilers turn into one or two permute instructions each.
template <int kWidth, typename V>
inline void TransposeSquare(V* rows) {
  using Order = std::make_index_sequence<kWidth>;
  for (int round = 1; round < kWidth; round *= 2) {
    V next[kWidth];
    for (int p = 0; p < kWidth / 2; ++p) {
      next[2 * p] = InterleaveLowHalves(rows[p], rows[p + kWidth / 2], Order{});
      next[2 * p + 1] = InterleaveHighHalves(rows[p], rows[p + kWidth / 2], Order{});
    }
    for (int i = 0; i < kWidth; ++i) rows[i] = next[i];
  }
}

}  // namespace kiln::cpu::fft::KILN_FFT_ISA
