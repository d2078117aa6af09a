#include "backends/cpu/window_fold_vectors.h"

#include <algorithm>
#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kiln::cpu {
namespace {

#if defined(__x86_64__)
#define KILN_WINDOW_FOLD_AVX512 __attribute__((target("avx512f")))

bool HasAvx512ForWindowFold() {
  static const bool has_avx512 = __builtin_cpu_supports("avx512f");
  return has_avx512;
}

template <typename T>
struct FoldLanes;

template <>
struct FoldLanes<float> {
  using Vector = __m512;
  using Mask = __mmask16;
  static constexpr int64_t kLanes = 16;
  KILN_WINDOW_FOLD_AVX512 static Mask Prefix(int64_t count) { return static_cast<Mask>((1u << count) - 1); }
  KILN_WINDOW_FOLD_AVX512 static Vector Set(float value) { return _mm512_set1_ps(value); }
  KILN_WINDOW_FOLD_AVX512 static Vector Load(const float* p) { return _mm512_loadu_ps(p); }
  KILN_WINDOW_FOLD_AVX512 static Vector Load(Mask m, const float* p) { return _mm512_maskz_loadu_ps(m, p); }
  KILN_WINDOW_FOLD_AVX512 static void Store(float* p, Vector v) { _mm512_storeu_ps(p, v); }
  KILN_WINDOW_FOLD_AVX512 static void StoreStreaming(float* p, Vector v) { _mm512_stream_ps(p, v); }
  KILN_WINDOW_FOLD_AVX512 static void Store(float* p, Mask m, Vector v) { _mm512_mask_storeu_ps(p, m, v); }
  KILN_WINDOW_FOLD_AVX512 static Mask NotNan(Vector v) { return _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q); }
  KILN_WINDOW_FOLD_AVX512 static Vector Max(Vector held, Mask m, Vector next) {
    return _mm512_mask_max_ps(held, m, held, next);
  }
  KILN_WINDOW_FOLD_AVX512 static Vector Min(Vector held, Mask m, Vector next) {
    return _mm512_mask_min_ps(held, m, held, next);
  }
  KILN_WINDOW_FOLD_AVX512 static Vector Add(Vector a, Vector b) { return _mm512_add_ps(a, b); }
  KILN_WINDOW_FOLD_AVX512 static Vector Sub(Vector a, Vector b) { return _mm512_sub_ps(a, b); }
  KILN_WINDOW_FOLD_AVX512 static Vector Mul(Vector a, Vector b) { return _mm512_mul_ps(a, b); }
  KILN_WINDOW_FOLD_AVX512 static Vector Div(Vector a, Vector b) { return _mm512_div_ps(a, b); }
};

template <>
struct FoldLanes<double> {
  using Vector = __m512d;
  using Mask = __mmask8;
  static constexpr int64_t kLanes = 8;
  KILN_WINDOW_FOLD_AVX512 static Mask Prefix(int64_t count) { return static_cast<Mask>((1u << count) - 1); }
  KILN_WINDOW_FOLD_AVX512 static Vector Set(double value) { return _mm512_set1_pd(value); }
  KILN_WINDOW_FOLD_AVX512 static Vector Load(const double* p) { return _mm512_loadu_pd(p); }
  KILN_WINDOW_FOLD_AVX512 static Vector Load(Mask m, const double* p) { return _mm512_maskz_loadu_pd(m, p); }
  KILN_WINDOW_FOLD_AVX512 static void Store(double* p, Vector v) { _mm512_storeu_pd(p, v); }
  KILN_WINDOW_FOLD_AVX512 static void StoreStreaming(double* p, Vector v) { _mm512_stream_pd(p, v); }
  KILN_WINDOW_FOLD_AVX512 static void Store(double* p, Mask m, Vector v) { _mm512_mask_storeu_pd(p, m, v); }
  KILN_WINDOW_FOLD_AVX512 static Mask NotNan(Vector v) { return _mm512_cmp_pd_mask(v, v, _CMP_ORD_Q); }
  KILN_WINDOW_FOLD_AVX512 static Vector Max(Vector held, Mask m, Vector next) {
    return _mm512_mask_max_pd(held, m, held, next);
  }
  KILN_WINDOW_FOLD_AVX512 static Vector Min(Vector held, Mask m, Vector next) {
    return _mm512_mask_min_pd(held, m, held, next);
  }
  KILN_WINDOW_FOLD_AVX512 static Vector Add(Vector a, Vector b) { return _mm512_add_pd(a, b); }
  KILN_WINDOW_FOLD_AVX512 static Vector Sub(Vector a, Vector b) { return _mm512_sub_pd(a, b); }
  KILN_WINDOW_FOLD_AVX512 static Vector Mul(Vector a, Vector b) { return _mm512_mul_pd(a, b); }
  KILN_WINDOW_FOLD_AVX512 static Vector Div(Vector a, Vector b) { return _mm512_div_pd(a, b); }
};

// One step of the fold. Max and min: where the value held is a NaN it
// stays; elsewhere vmaxps(held, next), which is held only where held > next.
// Sum and product: held + next (held * next), held first.
template <typename T, Opcode kReducer>
KILN_WINDOW_FOLD_AVX512 inline typename FoldLanes<T>::Vector FoldStep(typename FoldLanes<T>::Vector held,
                                                                      typename FoldLanes<T>::Vector next) {
  using L = FoldLanes<T>;
  if constexpr (kReducer == Opcode::kMaximum) {
    return L::Max(held, L::NotNan(held), next);
  } else if constexpr (kReducer == Opcode::kMinimum) {
    return L::Min(held, L::NotNan(held), next);
  } else if constexpr (kReducer == Opcode::kAdd) {
    return L::Add(held, next);
  } else {
    static_assert(kReducer == Opcode::kMultiply);
    return L::Mul(held, next);
  }
}

// The epilogue on a folded vector: op(held, scalar), or held. One branch
// per stored vector, the same one every time.
template <typename T>
KILN_WINDOW_FOLD_AVX512 inline typename FoldLanes<T>::Vector Finish(typename FoldLanes<T>::Vector held,
                                                                    std::optional<Opcode> op,
                                                                    typename FoldLanes<T>::Vector scalar) {
  using L = FoldLanes<T>;
  if (!op) return held;
  switch (*op) {
    case Opcode::kAdd: return L::Add(held, scalar);
    case Opcode::kSubtract: return L::Sub(held, scalar);
    case Opcode::kMultiply: return L::Mul(held, scalar);
    case Opcode::kDivide: return L::Div(held, scalar);
    default: return held;
  }
}

// Four vectors of lanes of each of kPositions output positions at a time:
// each window row's step depends on the last one (a max step is a compare
// and a masked max, 8 cycles), so the more independent chains, the busier
// the vector unit; two positions side by side make eight. With kStream,
// whole vectors at 64-byte aligned addresses are stored non-temporally (no
// read of the line first, no cache line kept).
template <typename T, Opcode kReducer, bool kStream, int kPositions>
KILN_WINDOW_FOLD_AVX512 inline void FoldPositions(const T* const* rows, size_t taps, T initial, int64_t n,
                                                  T* out, const WindowFoldEpilogue<T>& epilogue) {
  using L = FoldLanes<T>;
  using Vector = typename L::Vector;
  constexpr int64_t kChains = 4;
  const Vector start = L::Set(initial);
  const Vector scalar = L::Set(epilogue.scalar);
  int64_t c = 0;
  for (; c + kChains * L::kLanes <= n; c += kChains * L::kLanes) {
    Vector held[kPositions][kChains];
    for (int p = 0; p < kPositions; ++p) {
      for (int64_t v = 0; v < kChains; ++v) held[p][v] = start;
    }
    for (size_t k = 0; k < taps; ++k) {
      for (int p = 0; p < kPositions; ++p) {
        const T* row = rows[static_cast<size_t>(p) * taps + k] + c;
        for (int64_t v = 0; v < kChains; ++v)
          held[p][v] = FoldStep<T, kReducer>(held[p][v], L::Load(row + v * L::kLanes));
      }
    }
    for (int p = 0; p < kPositions; ++p) {
      for (int64_t v = 0; v < kChains; ++v) held[p][v] = Finish<T>(held[p][v], epilogue.op, scalar);
      T* to = out + p * n + c;
      if (kStream && reinterpret_cast<uintptr_t>(to) % 64 == 0) {
        for (int64_t v = 0; v < kChains; ++v) L::StoreStreaming(to + v * L::kLanes, held[p][v]);
      } else {
        for (int64_t v = 0; v < kChains; ++v) L::Store(to + v * L::kLanes, held[p][v]);
      }
    }
  }
  for (; c < n; c += L::kLanes) {
    const auto mask = L::Prefix(std::min<int64_t>(L::kLanes, n - c));
    Vector held[kPositions];
    for (int p = 0; p < kPositions; ++p) held[p] = start;
    for (size_t k = 0; k < taps; ++k) {
      for (int p = 0; p < kPositions; ++p)
        held[p] = FoldStep<T, kReducer>(held[p], L::Load(mask, rows[static_cast<size_t>(p) * taps + k] + c));
    }
    for (int p = 0; p < kPositions; ++p)
      L::Store(out + p * n + c, mask, Finish<T>(held[p], epilogue.op, scalar));
  }
}

template <typename T, Opcode kReducer, bool kStream>
KILN_WINDOW_FOLD_AVX512 void FoldWindowRows(const T* const* rows, size_t taps, size_t positions, T initial,
                                            int64_t n, T* out, const WindowFoldEpilogue<T>& epilogue) {
  if (positions == 2) {
    FoldPositions<T, kReducer, kStream, 2>(rows, taps, initial, n, out, epilogue);
  } else {
    FoldPositions<T, kReducer, kStream, 1>(rows, taps, initial, n, out, epilogue);
  }
}
#endif  // __x86_64__

}  // namespace

template <typename T>
WindowFoldRows<T> FindWindowFoldRows(Opcode reducer, bool stream_stores) {
#if defined(__x86_64__)
  if (!HasAvx512ForWindowFold()) return nullptr;
  switch (reducer) {
    case Opcode::kMaximum:
      return stream_stores ? &FoldWindowRows<T, Opcode::kMaximum, true>
                           : &FoldWindowRows<T, Opcode::kMaximum, false>;
    case Opcode::kMinimum:
      return stream_stores ? &FoldWindowRows<T, Opcode::kMinimum, true>
                           : &FoldWindowRows<T, Opcode::kMinimum, false>;
    case Opcode::kAdd:
      return stream_stores ? &FoldWindowRows<T, Opcode::kAdd, true> : &FoldWindowRows<T, Opcode::kAdd, false>;
    case Opcode::kMultiply:
      return stream_stores ? &FoldWindowRows<T, Opcode::kMultiply, true>
                           : &FoldWindowRows<T, Opcode::kMultiply, false>;
    default: break;
  }
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

template WindowFoldRows<float> FindWindowFoldRows<float>(Opcode, bool);
template WindowFoldRows<double> FindWindowFoldRows<double>(Opcode, bool);

}  // namespace kiln::cpu
