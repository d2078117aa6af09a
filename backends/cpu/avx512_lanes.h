// AVX-512F vectors of f32 and f64 lanes with the operations the CPU
// backend's hand-vectorised kernels share (the scans, scan_vectors.cc; the
// window folds, window_fold_vectors.cc): loads, stores, non-temporal stores,
// masks of the first lanes, arithmetic, and maximum and minimum with the
// interpreter's NaN and signed-zero rule. The library is built for the
// baseline x86-64, so every function here carries KILN_AVX512_LANES (the
// target attribute) and runs only where HasAvx512Lanes() says so; a caller
// compiles its kernels with the same attribute, so these inline into them.
#pragma once

#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kiln::cpu {

// The lanes of T in one 64-byte register.
template <typename T>
inline constexpr int64_t kAvx512LaneCount = 64 / static_cast<int64_t>(sizeof(T));

// Whether this CPU has AVX-512F (false off x86-64, where nothing below exists).
inline bool HasAvx512Lanes() {
#if defined(__x86_64__)
  static const bool has_avx512 = __builtin_cpu_supports("avx512f");
  return has_avx512;
#else
  return false;
#endif
}

#if defined(__x86_64__)
#define KILN_AVX512_LANES __attribute__((target("avx512f")))

// Maximum and Minimum are the interpreter's MaximumOp(a, b) and
// MinimumOp(a, b) (core/interpreter/scalar_ops.h) on every lane, bit for
// bit: a NaN a, else a NaN b, else a where a > b (a < b) and b otherwise,
// so of two equal values (zeros of either sign) the second. vmaxps(a, b)
// and vminps(a, b) return b unless a > b (a < b), NaNs and equal zeros
// included, so only a NaN a needs a mask: the lanes where a is a NaN keep it.
// Add, Sub, Mul and Div are one IEEE operation per lane, as the
// interpreter's (a NaN's payload aside, which neither it nor XLA fixes).
template <typename T>
struct Avx512Lanes;

template <>
struct Avx512Lanes<float> {
  using Vector = __m512;
  using Mask = __mmask16;
  static constexpr int kCount = static_cast<int>(kAvx512LaneCount<float>);
  // The first `count` (0 to kCount) lanes.
  KILN_AVX512_LANES static Mask Prefix(int64_t count) { return static_cast<Mask>((1u << count) - 1); }
  KILN_AVX512_LANES static Vector Set(float value) { return _mm512_set1_ps(value); }
  KILN_AVX512_LANES static Vector Load(const float* p) { return _mm512_loadu_ps(p); }
  // Lanes outside `m` are zero and not read (no fault past the mask).
  KILN_AVX512_LANES static Vector Load(Mask m, const float* p) { return _mm512_maskz_loadu_ps(m, p); }
  KILN_AVX512_LANES static void Store(float* p, Vector v) { _mm512_storeu_ps(p, v); }
  KILN_AVX512_LANES static void Store(float* p, Mask m, Vector v) { _mm512_mask_storeu_ps(p, m, v); }
  // Non-temporal: p is 64-byte aligned; needs an sfence (FenceStreamedStores) before the data is handed on.
  KILN_AVX512_LANES static void StoreStreaming(float* p, Vector v) { _mm512_stream_ps(p, v); }
  KILN_AVX512_LANES static Vector Add(Vector a, Vector b) { return _mm512_add_ps(a, b); }
  KILN_AVX512_LANES static Vector Sub(Vector a, Vector b) { return _mm512_sub_ps(a, b); }
  KILN_AVX512_LANES static Vector Mul(Vector a, Vector b) { return _mm512_mul_ps(a, b); }
  KILN_AVX512_LANES static Vector Div(Vector a, Vector b) { return _mm512_div_ps(a, b); }
  // b in the lanes of m, a elsewhere.
  KILN_AVX512_LANES static Vector Blend(Mask m, Vector a, Vector b) { return _mm512_mask_blend_ps(m, a, b); }
  KILN_AVX512_LANES static Vector Maximum(Vector a, Vector b) {
    return _mm512_mask_max_ps(a, _mm512_cmp_ps_mask(a, a, _CMP_ORD_Q), a, b);
  }
  KILN_AVX512_LANES static Vector Minimum(Vector a, Vector b) {
    return _mm512_mask_min_ps(a, _mm512_cmp_ps_mask(a, a, _CMP_ORD_Q), a, b);
  }
  // The same bits as 32-bit integer lanes and back (for shuffles).
  KILN_AVX512_LANES static __m512i Bits(Vector v) { return _mm512_castps_si512(v); }
  KILN_AVX512_LANES static Vector FromBits(__m512i v) { return _mm512_castsi512_ps(v); }
};

template <>
struct Avx512Lanes<double> {
  using Vector = __m512d;
  using Mask = __mmask8;
  static constexpr int kCount = static_cast<int>(kAvx512LaneCount<double>);
  KILN_AVX512_LANES static Mask Prefix(int64_t count) { return static_cast<Mask>((1u << count) - 1); }
  KILN_AVX512_LANES static Vector Set(double value) { return _mm512_set1_pd(value); }
  KILN_AVX512_LANES static Vector Load(const double* p) { return _mm512_loadu_pd(p); }
  KILN_AVX512_LANES static Vector Load(Mask m, const double* p) { return _mm512_maskz_loadu_pd(m, p); }
  KILN_AVX512_LANES static void Store(double* p, Vector v) { _mm512_storeu_pd(p, v); }
  KILN_AVX512_LANES static void Store(double* p, Mask m, Vector v) { _mm512_mask_storeu_pd(p, m, v); }
  KILN_AVX512_LANES static void StoreStreaming(double* p, Vector v) { _mm512_stream_pd(p, v); }
  KILN_AVX512_LANES static Vector Add(Vector a, Vector b) { return _mm512_add_pd(a, b); }
  KILN_AVX512_LANES static Vector Sub(Vector a, Vector b) { return _mm512_sub_pd(a, b); }
  KILN_AVX512_LANES static Vector Mul(Vector a, Vector b) { return _mm512_mul_pd(a, b); }
  KILN_AVX512_LANES static Vector Div(Vector a, Vector b) { return _mm512_div_pd(a, b); }
  KILN_AVX512_LANES static Vector Blend(Mask m, Vector a, Vector b) { return _mm512_mask_blend_pd(m, a, b); }
  KILN_AVX512_LANES static Vector Maximum(Vector a, Vector b) {
    return _mm512_mask_max_pd(a, _mm512_cmp_pd_mask(a, a, _CMP_ORD_Q), a, b);
  }
  KILN_AVX512_LANES static Vector Minimum(Vector a, Vector b) {
    return _mm512_mask_min_pd(a, _mm512_cmp_pd_mask(a, a, _CMP_ORD_Q), a, b);
  }
  KILN_AVX512_LANES static __m512i Bits(Vector v) { return _mm512_castpd_si512(v); }
  KILN_AVX512_LANES static Vector FromBits(__m512i v) { return _mm512_castsi512_pd(v); }
};

#endif  // __x86_64__

// Orders this thread's non-temporal stores before its later stores (x86
// does not order them by a release store alone): call it before the
// results are handed to another thread. A no-op off x86-64.
inline void FenceStreamedStores() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

}  // namespace kiln::cpu
