#include "backends/cpu/select_and_add_vectors.h"

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kiln::cpu {
namespace {

#if defined(__x86_64__)
// BW and VL for bf16's 16-bit masked loads and stores.
#define KILN_SELECT_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))

bool HasAvx512ForSelectAndAdd() {
  static const bool has_avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                                 __builtin_cpu_supports("avx512vl");
  return has_avx512;
}

// The select's comparison as the float compares read it: ordered, so false
// where either side is a NaN, like the scalar comparison; NE unordered, true there.
constexpr int SelectFloatPredicate(ComparisonDirection direction) {
  switch (direction) {
    case ComparisonDirection::kGe: return _CMP_GE_OQ;
    case ComparisonDirection::kGt: return _CMP_GT_OQ;
    case ComparisonDirection::kLe: return _CMP_LE_OQ;
    case ComparisonDirection::kLt: return _CMP_LT_OQ;
    case ComparisonDirection::kEq: return _CMP_EQ_OQ;
    case ComparisonDirection::kNe: return _CMP_NEQ_UQ;
  }
  return _CMP_EQ_OQ;
}

constexpr int SelectIntPredicate(ComparisonDirection direction) {
  switch (direction) {
    case ComparisonDirection::kGe: return _MM_CMPINT_NLT;
    case ComparisonDirection::kGt: return _MM_CMPINT_NLE;
    case ComparisonDirection::kLe: return _MM_CMPINT_LE;
    case ComparisonDirection::kLt: return _MM_CMPINT_LT;
    case ComparisonDirection::kEq: return _MM_CMPINT_EQ;
    case ComparisonDirection::kNe: return _MM_CMPINT_NE;
  }
  return _MM_CMPINT_EQ;
}

// A window place per lane: 32 bits for sixteen lanes, 64 for eight (as wide
// as the values, so the blends line up with the comparison masks).
struct SixteenPlaces {
  using Mask = __mmask16;
  static constexpr int64_t kLanes = 16;
  KILN_SELECT_AVX512 static Mask Prefix(int64_t count) {
    return count >= 16 ? static_cast<Mask>(0xffff) : static_cast<Mask>((1u << count) - 1);
  }
  KILN_SELECT_AVX512 static __m512i Place(size_t k) { return _mm512_set1_epi32(static_cast<int>(k)); }
  KILN_SELECT_AVX512 static __m512i KeepOr(Mask keep, __m512i place, __m512i where) {
    return _mm512_mask_blend_epi32(keep, place, where);
  }
  KILN_SELECT_AVX512 static Mask At(__m512i where, __m512i place) {
    return _mm512_cmpeq_epi32_mask(where, place);
  }
};

struct EightPlaces {
  using Mask = __mmask8;
  static constexpr int64_t kLanes = 8;
  KILN_SELECT_AVX512 static Mask Prefix(int64_t count) {
    return count >= 8 ? static_cast<Mask>(0xff) : static_cast<Mask>((1u << count) - 1);
  }
  KILN_SELECT_AVX512 static __m512i Place(size_t k) { return _mm512_set1_epi64(static_cast<long long>(k)); }
  KILN_SELECT_AVX512 static __m512i KeepOr(Mask keep, __m512i place, __m512i where) {
    return _mm512_mask_blend_epi64(keep, place, where);
  }
  KILN_SELECT_AVX512 static Mask At(__m512i where, __m512i place) {
    return _mm512_cmpeq_epi64_mask(where, place);
  }
};

template <typename T>
struct SelectAndAddLanes;

template <>
struct SelectAndAddLanes<float> : SixteenPlaces {
  using Vector = __m512;
  KILN_SELECT_AVX512 static Vector Load(Mask m, const float* p) { return _mm512_maskz_loadu_ps(m, p); }
  KILN_SELECT_AVX512 static void Store(float* p, Mask m, Vector v) { _mm512_mask_storeu_ps(p, m, v); }
  KILN_SELECT_AVX512 static Vector Add(Vector a, Vector b) { return _mm512_add_ps(a, b); }
  KILN_SELECT_AVX512 static Vector KeepOr(Mask keep, Vector candidate, Vector best) {
    return _mm512_mask_blend_ps(keep, candidate, best);
  }
  using SixteenPlaces::KeepOr;
  template <ComparisonDirection kDirection>
  KILN_SELECT_AVX512 static Mask Keeps(Vector best, Vector candidate) {
    return _mm512_cmp_ps_mask(best, candidate, SelectFloatPredicate(kDirection));
  }
};

template <>
struct SelectAndAddLanes<double> : EightPlaces {
  using Vector = __m512d;
  KILN_SELECT_AVX512 static Vector Load(Mask m, const double* p) { return _mm512_maskz_loadu_pd(m, p); }
  KILN_SELECT_AVX512 static void Store(double* p, Mask m, Vector v) { _mm512_mask_storeu_pd(p, m, v); }
  KILN_SELECT_AVX512 static Vector Add(Vector a, Vector b) { return _mm512_add_pd(a, b); }
  KILN_SELECT_AVX512 static Vector KeepOr(Mask keep, Vector candidate, Vector best) {
    return _mm512_mask_blend_pd(keep, candidate, best);
  }
  using EightPlaces::KeepOr;
  template <ComparisonDirection kDirection>
  KILN_SELECT_AVX512 static Mask Keeps(Vector best, Vector candidate) {
    return _mm512_cmp_pd_mask(best, candidate, SelectFloatPredicate(kDirection));
  }
};

// bf16 as the f32 it widens to (exactly), so the selection is f32's; the
// add rounds its f32 sum to bf16 as Eigen's float_to_bfloat16_rtne does
// (a bias of 0x7fff plus the kept part's lowest bit, then truncation; a
// NaN becomes 0x7fc0 or 0xffc0 by its sign), and keeps it widened, so the
// next add starts from the rounded value the interpreter stored. Not the
// AVX512_BF16 conversion: that flushes subnormals. (The masked forms of the
// conversions and shifts, every lane on: GCC 12's unmasked ones merge into
// an undefined register, which -Wmaybe-uninitialized refuses at -O3.)
// Its selection and blends are f32's, inherited; loads, stores and the add
// are its own.
template <>
struct SelectAndAddLanes<bfloat16> : SelectAndAddLanes<float> {
  KILN_SELECT_AVX512 static Vector Load(Mask m, const bfloat16* p) {
    const __m256i halves = _mm256_maskz_loadu_epi16(m, p);
    return _mm512_castsi512_ps(
        _mm512_maskz_slli_epi32(0xffff, _mm512_maskz_cvtepu16_epi32(0xffff, halves), 16));
  }
  KILN_SELECT_AVX512 static void Store(bfloat16* p, Mask m, Vector v) {
    _mm256_mask_storeu_epi16(
        p, m,
        _mm512_maskz_cvtepi32_epi16(0xffff, _mm512_maskz_srli_epi32(0xffff, _mm512_castps_si512(v), 16)));
  }
  KILN_SELECT_AVX512 static Vector Add(Vector a, Vector b) {
    const __m512 sum = _mm512_add_ps(a, b);
    const __m512i bits = _mm512_castps_si512(sum);
    const __m512i kept_lowest =
        _mm512_and_si512(_mm512_maskz_srli_epi32(0xffff, bits, 16), _mm512_set1_epi32(1));
    const __m512i bias = _mm512_add_epi32(kept_lowest, _mm512_set1_epi32(0x7fff));
    __m512i rounded =
        _mm512_and_si512(_mm512_add_epi32(bits, bias), _mm512_set1_epi32(static_cast<int>(0xffff0000u)));
    const __mmask16 nan = _mm512_cmp_ps_mask(sum, sum, _CMP_UNORD_Q);
    const __m512i quiet_nan =
        _mm512_or_si512(_mm512_and_si512(bits, _mm512_set1_epi32(static_cast<int>(0x80000000u))),
                        _mm512_set1_epi32(0x7fc00000));
    rounded = _mm512_mask_mov_epi32(rounded, nan, quiet_nan);
    return _mm512_castsi512_ps(rounded);
  }
};

// Integers: the values as __m512i, so their blends are the places' own
// (a class per type keeps the overloads apart).
template <typename T, typename Places>
struct IntegerSelectAndAddLanes : Places {
  using Mask = typename Places::Mask;
  struct Vector {
    __m512i bits;
  };
  KILN_SELECT_AVX512 static Vector Load(Mask m, const T* p) {
    if constexpr (sizeof(T) == 4)
      return {_mm512_maskz_loadu_epi32(m, p)};
    else
      return {_mm512_maskz_loadu_epi64(m, p)};
  }
  KILN_SELECT_AVX512 static void Store(T* p, Mask m, Vector v) {
    if constexpr (sizeof(T) == 4)
      _mm512_mask_storeu_epi32(p, m, v.bits);
    else
      _mm512_mask_storeu_epi64(p, m, v.bits);
  }
  // Wrapping, as the interpreter's integer add.
  KILN_SELECT_AVX512 static Vector Add(Vector a, Vector b) {
    if constexpr (sizeof(T) == 4)
      return {_mm512_add_epi32(a.bits, b.bits)};
    else
      return {_mm512_add_epi64(a.bits, b.bits)};
  }
  KILN_SELECT_AVX512 static Vector KeepOr(Mask keep, Vector candidate, Vector best) {
    return {Places::KeepOr(keep, candidate.bits, best.bits)};
  }
  using Places::KeepOr;
  template <ComparisonDirection kDirection>
  KILN_SELECT_AVX512 static Mask Keeps(Vector best, Vector candidate) {
    constexpr int kPredicate = SelectIntPredicate(kDirection);
    if constexpr (std::is_same_v<T, int32_t>)
      return _mm512_cmp_epi32_mask(best.bits, candidate.bits, kPredicate);
    else if constexpr (std::is_same_v<T, uint32_t>)
      return _mm512_cmp_epu32_mask(best.bits, candidate.bits, kPredicate);
    else if constexpr (std::is_same_v<T, int64_t>)
      return _mm512_cmp_epi64_mask(best.bits, candidate.bits, kPredicate);
    else
      return _mm512_cmp_epu64_mask(best.bits, candidate.bits, kPredicate);
  }
};

template <>
struct SelectAndAddLanes<int32_t> : IntegerSelectAndAddLanes<int32_t, SixteenPlaces> {};
template <>
struct SelectAndAddLanes<uint32_t> : IntegerSelectAndAddLanes<uint32_t, SixteenPlaces> {};
template <>
struct SelectAndAddLanes<int64_t> : IntegerSelectAndAddLanes<int64_t, EightPlaces> {};
template <>
struct SelectAndAddLanes<uint64_t> : IntegerSelectAndAddLanes<uint64_t, EightPlaces> {};

// Per vector of lanes: the best value and its place in the window
// (a later row replaces it where the comparison does not keep it), then each
// window row adds the source into the lanes that selected it, with a masked
// store (a store of no lane is a no-op: no branch on it, which real data
// would mispredict). The compiler leaves the scalar form's per-lane select
// as a branch, which mispredicts on every other element of real data.
// kGroup vectors side by side: each one's selection is a chain of a compare
// and a blend per window row, so one vector at a time leaves the vector
// unit waiting on the chain (NHWC pooling's 64 channels are four vectors).
template <typename T, ComparisonDirection kDirection>
KILN_SELECT_AVX512 void SelectAndAddAvx512(const T* const* in, T* const* out, size_t taps, const T* values,
                                           int64_t n) {
  using Lanes = SelectAndAddLanes<T>;
  using Mask = typename Lanes::Mask;
  using Vector = typename Lanes::Vector;
  constexpr int kGroup = 4;
  for (int64_t c = 0; c < n; c += kGroup * Lanes::kLanes) {
    Mask lanes[kGroup];
    Vector best[kGroup];
    __m512i where[kGroup];
    for (int v = 0; v < kGroup; ++v) {
      lanes[v] = Lanes::Prefix(std::max<int64_t>(0, n - c - v * Lanes::kLanes));
      best[v] = Lanes::Load(lanes[v], in[0] + c + v * Lanes::kLanes);
      where[v] = _mm512_setzero_si512();
    }
    for (size_t k = 1; k < taps; ++k) {
      const __m512i place = Lanes::Place(k);
      for (int v = 0; v < kGroup; ++v) {
        const Vector candidate = Lanes::Load(lanes[v], in[k] + c + v * Lanes::kLanes);
        const Mask keep = Lanes::template Keeps<kDirection>(best[v], candidate);
        best[v] = Lanes::KeepOr(keep, candidate, best[v]);
        where[v] = Lanes::KeepOr(keep, place, where[v]);
      }
    }
    Vector value[kGroup];
    for (int v = 0; v < kGroup; ++v) value[v] = Lanes::Load(lanes[v], values + c + v * Lanes::kLanes);
    for (size_t k = 0; k < taps; ++k) {
      const __m512i place = Lanes::Place(k);
      for (int v = 0; v < kGroup; ++v) {
        const Mask chosen = static_cast<Mask>(Lanes::At(where[v], place) & lanes[v]);
        T* row = out[k] + c + v * Lanes::kLanes;
        Lanes::Store(row, chosen, Lanes::Add(Lanes::Load(chosen, row), value[v]));
      }
    }
  }
}
#endif

}  // namespace

template <typename T>
SelectAndAddBlock<T> FindSelectAndAddBlock(ComparisonDirection direction) {
#if defined(__x86_64__)
  if (!HasAvx512ForSelectAndAdd()) return nullptr;
  switch (direction) {
    case ComparisonDirection::kGe: return SelectAndAddAvx512<T, ComparisonDirection::kGe>;
    case ComparisonDirection::kGt: return SelectAndAddAvx512<T, ComparisonDirection::kGt>;
    case ComparisonDirection::kLe: return SelectAndAddAvx512<T, ComparisonDirection::kLe>;
    case ComparisonDirection::kLt: return SelectAndAddAvx512<T, ComparisonDirection::kLt>;
    case ComparisonDirection::kEq: return SelectAndAddAvx512<T, ComparisonDirection::kEq>;
    case ComparisonDirection::kNe: return SelectAndAddAvx512<T, ComparisonDirection::kNe>;
  }
#else
  (void)direction;
#endif
  return nullptr;
}

template SelectAndAddBlock<float> FindSelectAndAddBlock<float>(ComparisonDirection);
template SelectAndAddBlock<double> FindSelectAndAddBlock<double>(ComparisonDirection);
template SelectAndAddBlock<int32_t> FindSelectAndAddBlock<int32_t>(ComparisonDirection);
template SelectAndAddBlock<uint32_t> FindSelectAndAddBlock<uint32_t>(ComparisonDirection);
template SelectAndAddBlock<int64_t> FindSelectAndAddBlock<int64_t>(ComparisonDirection);
template SelectAndAddBlock<uint64_t> FindSelectAndAddBlock<uint64_t>(ComparisonDirection);
template SelectAndAddBlock<bfloat16> FindSelectAndAddBlock<bfloat16>(ComparisonDirection);

}  // namespace kiln::cpu
