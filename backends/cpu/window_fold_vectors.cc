#include "backends/cpu/window_extremum_vectors.h"

#include <algorithm>
#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kiln::cpu {
namespace {

#if defined(__x86_64__)
#define KILN_EXTREMUM_AVX512 __attribute__((target("avx512f")))

bool HasAvx512ForWindowExtremum() {
  static const bool has_avx512 = __builtin_cpu_supports("avx512f");
  return has_avx512;
}

template <typename T>
struct ExtremumLanes;

template <>
struct ExtremumLanes<float> {
  using Vector = __m512;
  using Mask = __mmask16;
  static constexpr int64_t kLanes = 16;
  KILN_EXTREMUM_AVX512 static Mask Prefix(int64_t count) { return static_cast<Mask>((1u << count) - 1); }
  KILN_EXTREMUM_AVX512 static Vector Set(float value) { return _mm512_set1_ps(value); }
  KILN_EXTREMUM_AVX512 static Vector Load(const float* p) { return _mm512_loadu_ps(p); }
  KILN_EXTREMUM_AVX512 static Vector Load(Mask m, const float* p) { return _mm512_maskz_loadu_ps(m, p); }
  KILN_EXTREMUM_AVX512 static void Store(float* p, Vector v) { _mm512_storeu_ps(p, v); }
  KILN_EXTREMUM_AVX512 static void StoreStreaming(float* p, Vector v) { _mm512_stream_ps(p, v); }
  KILN_EXTREMUM_AVX512 static void Store(float* p, Mask m, Vector v) { _mm512_mask_storeu_ps(p, m, v); }
  KILN_EXTREMUM_AVX512 static Mask NotNan(Vector v) { return _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q); }
  KILN_EXTREMUM_AVX512 static Vector Max(Vector held, Mask m, Vector next) {
    return _mm512_mask_max_ps(held, m, held, next);
  }
  KILN_EXTREMUM_AVX512 static Vector Min(Vector held, Mask m, Vector next) {
    return _mm512_mask_min_ps(held, m, held, next);
  }
};

template <>
struct ExtremumLanes<double> {
  using Vector = __m512d;
  using Mask = __mmask8;
  static constexpr int64_t kLanes = 8;
  KILN_EXTREMUM_AVX512 static Mask Prefix(int64_t count) { return static_cast<Mask>((1u << count) - 1); }
  KILN_EXTREMUM_AVX512 static Vector Set(double value) { return _mm512_set1_pd(value); }
  KILN_EXTREMUM_AVX512 static Vector Load(const double* p) { return _mm512_loadu_pd(p); }
  KILN_EXTREMUM_AVX512 static Vector Load(Mask m, const double* p) { return _mm512_maskz_loadu_pd(m, p); }
  KILN_EXTREMUM_AVX512 static void Store(double* p, Vector v) { _mm512_storeu_pd(p, v); }
  KILN_EXTREMUM_AVX512 static void StoreStreaming(double* p, Vector v) { _mm512_stream_pd(p, v); }
  KILN_EXTREMUM_AVX512 static void Store(double* p, Mask m, Vector v) { _mm512_mask_storeu_pd(p, m, v); }
  KILN_EXTREMUM_AVX512 static Mask NotNan(Vector v) { return _mm512_cmp_pd_mask(v, v, _CMP_ORD_Q); }
  KILN_EXTREMUM_AVX512 static Vector Max(Vector held, Mask m, Vector next) {
    return _mm512_mask_max_pd(held, m, held, next);
  }
  KILN_EXTREMUM_AVX512 static Vector Min(Vector held, Mask m, Vector next) {
    return _mm512_mask_min_pd(held, m, held, next);
  }
};

// One step of the fold: where the value held is a NaN it stays; elsewhere
// vmaxps(held, next), which is held only where held > next.
template <typename T, bool kMaximum>
KILN_EXTREMUM_AVX512 inline typename ExtremumLanes<T>::Vector FoldStep(
    typename ExtremumLanes<T>::Vector held, typename ExtremumLanes<T>::Vector next) {
  using L = ExtremumLanes<T>;
  if constexpr (kMaximum) {
    return L::Max(held, L::NotNan(held), next);
  } else {
    return L::Min(held, L::NotNan(held), next);
  }
}

// Four vectors of lanes at a time: each window row's step depends on the
// last one, so four independent chains keep the vector unit busy. With
// kStream, whole vectors at 64-byte aligned addresses are stored
// non-temporally (no read of the line first, no cache line kept).
template <typename T, bool kMaximum, bool kStream>
KILN_EXTREMUM_AVX512 void FoldWindowRows(const T* const* rows, size_t taps, T initial, int64_t n, T* out) {
  using L = ExtremumLanes<T>;
  using Vector = typename L::Vector;
  constexpr int64_t kChains = 4;
  const Vector start = L::Set(initial);
  int64_t c = 0;
  for (; c + kChains * L::kLanes <= n; c += kChains * L::kLanes) {
    Vector held[kChains];
    for (int64_t v = 0; v < kChains; ++v) held[v] = start;
    for (size_t k = 0; k < taps; ++k) {
      const T* row = rows[k] + c;
      for (int64_t v = 0; v < kChains; ++v)
        held[v] = FoldStep<T, kMaximum>(held[v], L::Load(row + v * L::kLanes));
    }
    T* to = out + c;
    if (kStream && reinterpret_cast<uintptr_t>(to) % 64 == 0) {
      for (int64_t v = 0; v < kChains; ++v) L::StoreStreaming(to + v * L::kLanes, held[v]);
    } else {
      for (int64_t v = 0; v < kChains; ++v) L::Store(to + v * L::kLanes, held[v]);
    }
  }
  for (; c < n; c += L::kLanes) {
    const auto mask = L::Prefix(std::min<int64_t>(L::kLanes, n - c));
    Vector held = start;
    for (size_t k = 0; k < taps; ++k) held = FoldStep<T, kMaximum>(held, L::Load(mask, rows[k] + c));
    L::Store(out + c, mask, held);
  }
}
#endif  // __x86_64__

}  // namespace

template <typename T>
WindowExtremumRows<T> FindWindowExtremumRows(Opcode reducer, bool stream_stores) {
#if defined(__x86_64__)
  if (!HasAvx512ForWindowExtremum()) return nullptr;
  if (reducer == Opcode::kMaximum)
    return stream_stores ? &FoldWindowRows<T, true, true> : &FoldWindowRows<T, true, false>;
  if (reducer == Opcode::kMinimum)
    return stream_stores ? &FoldWindowRows<T, false, true> : &FoldWindowRows<T, false, false>;
#else
  (void)reducer;
  (void)stream_stores;
#endif
  return nullptr;
}

void FenceStreamedWindowStores() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

template WindowExtremumRows<float> FindWindowExtremumRows<float>(Opcode, bool);
template WindowExtremumRows<double> FindWindowExtremumRows<double>(Opcode, bool);

}  // namespace kiln::cpu
