#include "backends/cpu/row_scatter_rows.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "backends/cpu/avx512_lanes.h"

namespace kiln::cpu {
namespace {

// Indices read, and their updates listed, at a time: the list (4 KiB) stays
// in L1 while it is applied.
constexpr int64_t kRowScatterBlock = 1024;
// How far down the list rows are prefetched. An update of a 64-byte row
// takes about 4 ns when its rows are at hand, a miss to L3 or memory
// 50-300 ns: a few dozen updates ahead covers it (8, 16 and 32 ahead
// measured alike on AMD EPYC, all ~9x faster than none).
constexpr int64_t kRowScatterPrefetchDistance = 32;
// How far ahead of the update being added the loops over every update
// prefetch the update rows into L1, in bytes of the stream. The hardware
// prefetcher brings the stream near but not into L1 in time: on AMD EPYC
// (Zen 4), 1M updates of 16 f32 into 100k rows took 4.8 -> 4.4 ms on one
// core in the loop for rows of whole vectors below (1-4 KiB ahead measured
// alike in a C model of it; into L2 alone, prefetcht2, gained nothing).
constexpr int64_t kRowScatterUpdateStreamLeadBytes = 2048;
// Cache lines of a row prefetched at most: past these the hardware
// prefetcher follows a row's consecutive lines by itself.
constexpr int64_t kRowScatterPrefetchLines = 4;
constexpr int64_t kRowScatterCacheLine = 64;

// The row an index names, as unsigned: a negative index is huge, so one
// comparison finds every index outside a stretch of rows. With kWrap (a
// signed index the plan wraps), a negative index first names the row
// rows + index, as JAX's select(i < 0, i + rows, i) computes it; an index
// below -rows stays negative.
template <bool kWrap, typename Index>
uint64_t RowScatterRowOf(Index index, int64_t rows) {
  auto row = static_cast<int64_t>(index);
  if constexpr (kWrap) row += row < 0 ? rows : 0;
  return static_cast<uint64_t>(row);
}

// Lists in `listed` the positions k in [0, count) whose index names a row in
// [first_row, first_row + row_count), in order, and returns how many. The
// count moves by a comparison's result, not a branch: when several threads
// split the rows, whether an update is this thread's is a coin toss that a
// branch would mispredict half the time.
template <bool kWrap, typename Index>
int64_t ListRowScatterBlock(const Index* indices, int64_t count, int64_t rows, uint64_t first_row,
                            uint64_t row_count, uint32_t* listed) {
  int64_t listed_count = 0;
  for (int64_t k = 0; k < count; ++k) {
    listed[listed_count] = static_cast<uint32_t>(k);
    listed_count += RowScatterRowOf<kWrap>(indices[k], rows) - first_row < row_count ? 1 : 0;
  }
  return listed_count;
}

// Always inlined: GCC counts a prefetch as no side effect, so a copy of
// this function left out of line is "const" and its calls are deleted. GCC
// 12 at -O3 did that to the destination rows' prefetch of the loop over
// every update once the update rows were prefetched too (an IPA-CP clone
// for one value of `for_writing`), and the loop ran 3x slower.
__attribute__((always_inline)) inline void PrefetchRowScatterRow(const void* row, int64_t row_bytes,
                                                                 bool for_writing) {
  const auto* bytes = static_cast<const char*>(row);
  const int64_t lines =
      std::min(kRowScatterPrefetchLines, (row_bytes + kRowScatterCacheLine - 1) / kRowScatterCacheLine);
  for (int64_t line = 0; line < lines; ++line) {
    if (for_writing) {
      __builtin_prefetch(bytes + line * kRowScatterCacheLine, 1);
    } else {
      __builtin_prefetch(bytes + line * kRowScatterCacheLine, 0);
    }
  }
}

// One row combined element by element, as the interpreter does; integers
// add with wrap-around, as XLA's do (on the unsigned type, where overflow is
// defined).
struct PortableRowScatterCombine {
  template <typename T>
  static void Apply(RowScatterCombiner combiner, T* __restrict destination, const T* __restrict update,
                    int64_t count) {
    if (combiner == RowScatterCombiner::kAssign) {
      std::memcpy(destination, update, static_cast<size_t>(count) * sizeof(T));
    } else if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      for (int64_t j = 0; j < count; ++j)
        destination[j] = static_cast<T>(static_cast<U>(destination[j]) + static_cast<U>(update[j]));
    } else {
      for (int64_t j = 0; j < count; ++j) destination[j] += update[j];
    }
  }
};

// The updates of one block in `listed` (positions from `block`), applied in
// order with the rows kRowScatterPrefetchDistance updates on prefetched.
// Always inlined, so that inside the AVX-512 entry point below Combine's
// vector code inlines into it.
template <typename Combine, bool kWrap, typename T, typename Index>
__attribute__((always_inline)) inline void ApplyListedRowScatterUpdates(const RowScatterPlan& plan,
                                                                        const Index* indices,
                                                                        const T* updates, T* output,
                                                                        const uint32_t* listed,
                                                                        int64_t listed_count) {
  const int64_t width = plan.row_elements;
  const int64_t row_bytes = width * static_cast<int64_t>(sizeof(T));
  for (int64_t j = 0; j < listed_count; ++j) {
    if (j + kRowScatterPrefetchDistance < listed_count) {
      const int64_t ahead = listed[j + kRowScatterPrefetchDistance];
      PrefetchRowScatterRow(
          output + static_cast<int64_t>(RowScatterRowOf<kWrap>(indices[ahead], plan.rows)) * width, row_bytes,
          true);
      PrefetchRowScatterRow(updates + ahead * width, row_bytes, false);
    }
    const int64_t k = listed[j];
    Combine::Apply(plan.combiner,
                   output + static_cast<int64_t>(RowScatterRowOf<kWrap>(indices[k], plan.rows)) * width,
                   updates + k * width, width);
  }
}

// Every update of the whole table, in order, the destination row
// kRowScatterPrefetchDistance updates on and the update row
// RowScatterUpdatePrefetchRows on prefetched. No list: nearly every
// index names a row, so the branch that passes over the others is
// predicted right, and this is ~10% faster than listing (1M updates of 64
// bytes, AMD EPYC).
template <typename Combine, bool kWrap, typename T, typename Index>
__attribute__((always_inline)) inline void ApplyEveryRowScatterUpdate(const RowScatterPlan& plan,
                                                                      const Index* indices, const T* updates,
                                                                      T* output) {
  // The plan's fields as locals: the vector stores may alias anything, so
  // read through `plan` they would be loaded again for every update.
  const int64_t width = plan.row_elements;
  const int64_t row_bytes = width * static_cast<int64_t>(sizeof(T));
  const int64_t table_rows = plan.rows;
  const auto rows = static_cast<uint64_t>(table_rows);
  const int64_t count = plan.updates;
  const RowScatterCombiner combiner = plan.combiner;
  const int64_t update_lead = RowScatterUpdatePrefetchRows(row_bytes);
  for (int64_t u = 0; u < count; ++u) {
    if (u + kRowScatterPrefetchDistance < count) {
      const uint64_t ahead = RowScatterRowOf<kWrap>(indices[u + kRowScatterPrefetchDistance], table_rows);
      if (ahead < rows) PrefetchRowScatterRow(output + static_cast<int64_t>(ahead) * width, row_bytes, true);
    }
    if (u + update_lead < count) PrefetchRowScatterRow(updates + (u + update_lead) * width, row_bytes, false);
    const uint64_t row = RowScatterRowOf<kWrap>(indices[u], table_rows);
    if (row < rows)
      Combine::Apply(combiner, output + static_cast<int64_t>(row) * width, updates + u * width, width);
  }
}

// Whether a stretch is every row of the table: its updates then go through
// the loop over every update, without a list.
bool RowScatterStretchIsWholeTable(const RowScatterPlan& plan, int64_t row_begin, int64_t row_end) {
  return row_begin == 0 && row_end == plan.rows;
}

template <typename Combine, bool kWrap, typename T, typename Index>
__attribute__((always_inline)) inline void ApplyRowScatterRange(const RowScatterPlan& plan,
                                                                const RowScatterArrays& arrays,
                                                                int64_t row_begin, int64_t row_end) {
  const auto* indices = static_cast<const Index*>(arrays.indices);
  const auto* updates = static_cast<const T*>(arrays.updates);
  auto* output = static_cast<T*>(arrays.output);
  if (RowScatterStretchIsWholeTable(plan, row_begin, row_end)) {
    ApplyEveryRowScatterUpdate<Combine, kWrap>(plan, indices, updates, output);
    return;
  }
  const int64_t width = plan.row_elements;
  uint32_t listed[kRowScatterBlock];
  for (int64_t block = 0; block < plan.updates; block += kRowScatterBlock) {
    const int64_t count = std::min(kRowScatterBlock, plan.updates - block);
    const int64_t listed_count =
        ListRowScatterBlock<kWrap>(indices + block, count, plan.rows, static_cast<uint64_t>(row_begin),
                                   static_cast<uint64_t>(row_end - row_begin), listed);
    ApplyListedRowScatterUpdates<Combine, kWrap>(plan, indices + block, updates + block * width, output,
                                                 listed, listed_count);
  }
}

#if defined(__x86_64__)
// A row combined a 64-byte vector at a time, the last part under a mask: the
// same IEEE addition (or wrap-around integer addition) per element as the
// portable loop, so the same bytes. Loads and stores go through integer
// lanes of the element's width, whatever its type.
struct Avx512RowScatterCombine {
  template <typename T>
  KILN_AVX512_LANES static __m512i Add(__m512i a, __m512i b) {
    if constexpr (std::is_same_v<T, float>) {
      return _mm512_castps_si512(_mm512_add_ps(_mm512_castsi512_ps(a), _mm512_castsi512_ps(b)));
    } else if constexpr (std::is_same_v<T, double>) {
      return _mm512_castpd_si512(_mm512_add_pd(_mm512_castsi512_pd(a), _mm512_castsi512_pd(b)));
    } else if constexpr (sizeof(T) == 4) {
      return _mm512_add_epi32(a, b);
    } else {
      return _mm512_add_epi64(a, b);
    }
  }
  template <typename T>
  KILN_AVX512_LANES static __m512i Load(int64_t count, const T* p) {
    if constexpr (sizeof(T) == 4) {
      return _mm512_maskz_loadu_epi32(static_cast<__mmask16>((1u << count) - 1), p);
    } else {
      return _mm512_maskz_loadu_epi64(static_cast<__mmask8>((1u << count) - 1), p);
    }
  }
  template <typename T>
  KILN_AVX512_LANES static void Store(int64_t count, T* p, __m512i v) {
    if constexpr (sizeof(T) == 4) {
      _mm512_mask_storeu_epi32(p, static_cast<__mmask16>((1u << count) - 1), v);
    } else {
      _mm512_mask_storeu_epi64(p, static_cast<__mmask8>((1u << count) - 1), v);
    }
  }
  // Every lane, for the masked forms of the conversions and shifts: their
  // plain forms pass GCC 12 an "undefined" source that -Wmaybe-uninitialized
  // (an error here) reports once inlined.
  static constexpr __mmask16 kEvery16 = 0xffff;
  // 16 bf16 or f16 as f32 lanes (exactly), and back rounded to nearest
  // even as Eigen's conversions, the interpreter's, round: bf16 by adding
  // 0x7fff and the kept part's lowest bit, a NaN becoming the quiet NaN
  // 0x7fc0 with its sign; f16 by vcvtps2ph.
  template <typename T>
  KILN_AVX512_LANES static __m512 Widen16(const T* p) {
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    if constexpr (std::is_same_v<T, bfloat16>) {
      return _mm512_castsi512_ps(
          _mm512_maskz_slli_epi32(kEvery16, _mm512_maskz_cvtepu16_epi32(kEvery16, bits), 16));
    } else {
      return _mm512_maskz_cvtph_ps(kEvery16, bits);
    }
  }
  template <typename T>
  KILN_AVX512_LANES static void Narrow16(T* p, __m512 value) {
    __m256i narrowed;
    if constexpr (std::is_same_v<T, bfloat16>) {
      const __m512i bits = _mm512_castps_si512(value);
      const __m512i high = _mm512_maskz_srli_epi32(kEvery16, bits, 16);
      const __m512i bias =
          _mm512_add_epi32(_mm512_and_si512(high, _mm512_set1_epi32(1)), _mm512_set1_epi32(0x7fff));
      const __m512i rounded = _mm512_maskz_srli_epi32(kEvery16, _mm512_add_epi32(bits, bias), 16);
      const __m512i quiet_nan =
          _mm512_or_si512(_mm512_and_si512(high, _mm512_set1_epi32(0x8000)), _mm512_set1_epi32(0x7fc0));
      const __mmask16 nan = _mm512_cmp_ps_mask(value, value, _CMP_UNORD_Q);
      narrowed = _mm512_maskz_cvtepi32_epi16(kEvery16, _mm512_mask_blend_epi32(nan, rounded, quiet_nan));
    } else {
      narrowed = _mm512_maskz_cvtps_ph(kEvery16, value, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), narrowed);
  }
  template <typename T>
  KILN_AVX512_LANES static void ApplyTwoByteFloats(RowScatterCombiner combiner, T* __restrict destination,
                                                   const T* __restrict update, int64_t count) {
    if (combiner == RowScatterCombiner::kAssign) {
      std::memcpy(destination, update, static_cast<size_t>(count) * sizeof(T));
      return;
    }
    int64_t j = 0;
    for (; j + 16 <= count; j += 16)
      Narrow16(destination + j, _mm512_add_ps(Widen16(destination + j), Widen16(update + j)));
    for (; j < count; ++j) destination[j] += update[j];  // Eigen's rounding, as above
  }
  template <typename T>
  KILN_AVX512_LANES static void Apply(RowScatterCombiner combiner, T* __restrict destination,
                                      const T* __restrict update, int64_t count) {
    if constexpr (sizeof(T) == 2) {
      ApplyTwoByteFloats(combiner, destination, update, count);
    } else {
      constexpr int64_t kLanes = kAvx512LaneCount<T>;
      int64_t j = 0;
      if (combiner == RowScatterCombiner::kAssign) {
        for (; j + kLanes <= count; j += kLanes)
          _mm512_storeu_si512(destination + j, _mm512_loadu_si512(update + j));
        if (j < count) Store(count - j, destination + j, Load(count - j, update + j));
        return;
      }
      for (; j + kLanes <= count; j += kLanes) {
        _mm512_storeu_si512(destination + j,
                            Add<T>(_mm512_loadu_si512(destination + j), _mm512_loadu_si512(update + j)));
      }
      if (j < count) {
        Store(count - j, destination + j,
              Add<T>(Load(count - j, destination + j), Load(count - j, update + j)));
      }
    }
  }
};

// ApplyEveryRowScatterUpdate's add for rows of kVectors whole vectors of a
// 4- or 8-byte type (16 f32, the width of JAX's benchmark row, is one),
// the width known at compile time: where the general loop runs, per
// update, a loop over the row's vectors with a masked tail and loops over
// the lines it prefetches, this one is straight-line code. 1M updates of
// 16 f32 into 100k rows on one core of AMD EPYC (Zen 4): 5.5 -> 4.4 ms,
// 4.8 ms of it without the update rows' prefetch.
template <int64_t kVectors, bool kWrap, typename T, typename Index>
KILN_AVX512_LANES void AddEveryRowScatterUpdateOfWholeVectors(const RowScatterPlan& plan,
                                                              const Index* indices, const T* updates,
                                                              T* output) {
  constexpr int64_t kLanes = kAvx512LaneCount<T>;
  constexpr int64_t kWidth = kVectors * kLanes;
  static_assert(kVectors <= kRowScatterPrefetchLines, "a row's every line is prefetched");
  const int64_t table_rows = plan.rows;
  const auto rows = static_cast<uint64_t>(table_rows);
  const int64_t count = plan.updates;
  constexpr int64_t kRowBytes = kVectors * kRowScatterCacheLine;
  const int64_t update_lead = RowScatterUpdatePrefetchRows(kRowBytes);
  for (int64_t u = 0; u < count; ++u) {
    if (u + kRowScatterPrefetchDistance < count) {
      const uint64_t ahead = RowScatterRowOf<kWrap>(indices[u + kRowScatterPrefetchDistance], table_rows);
      if (ahead < rows) PrefetchRowScatterRow(output + static_cast<int64_t>(ahead) * kWidth, kRowBytes, true);
    }
    if (u + update_lead < count)
      PrefetchRowScatterRow(updates + (u + update_lead) * kWidth, kRowBytes, false);
    const uint64_t row = RowScatterRowOf<kWrap>(indices[u], table_rows);
    if (row < rows) {
      T* destination = output + static_cast<int64_t>(row) * kWidth;
      const T* update = updates + u * kWidth;
      for (int64_t v = 0; v < kVectors; ++v) {
        _mm512_storeu_si512(destination + v * kLanes,
                            Avx512RowScatterCombine::Add<T>(_mm512_loadu_si512(destination + v * kLanes),
                                                            _mm512_loadu_si512(update + v * kLanes)));
      }
    }
  }
}

// Whether AddEveryRowScatterUpdateOfWholeVectors<vectors> took the stretch
// (an add over the whole table of rows of 1, 2 or 4 whole vectors).
template <bool kWrap, typename T, typename Index>
KILN_AVX512_LANES bool AddedRowScatterUpdatesOfWholeVectors(const RowScatterPlan& plan,
                                                            const RowScatterArrays& arrays, int64_t row_begin,
                                                            int64_t row_end) {
  if constexpr (sizeof(T) < 4) {
    return false;
  } else {
    constexpr int64_t kLanes = kAvx512LaneCount<T>;
    if (plan.combiner != RowScatterCombiner::kAdd ||
        !RowScatterStretchIsWholeTable(plan, row_begin, row_end) || plan.row_elements % kLanes != 0)
      return false;
    const auto* indices = static_cast<const Index*>(arrays.indices);
    const auto* updates = static_cast<const T*>(arrays.updates);
    auto* output = static_cast<T*>(arrays.output);
    switch (plan.row_elements / kLanes) {
      case 1: AddEveryRowScatterUpdateOfWholeVectors<1, kWrap>(plan, indices, updates, output); return true;
      case 2: AddEveryRowScatterUpdateOfWholeVectors<2, kWrap>(plan, indices, updates, output); return true;
      case 4: AddEveryRowScatterUpdateOfWholeVectors<4, kWrap>(plan, indices, updates, output); return true;
      default: return false;
    }
  }
}

// Flattened: every call in it is inlined, Combine::Apply's vector code and
// the prefetches included. Left to GCC's heuristics, Apply stopped being
// inlined once the wrapped instantiations made this file larger, and the
// loop over every update lost its prefetch: 4x slower.
template <bool kWrap, typename T, typename Index>
KILN_AVX512_LANES __attribute__((flatten)) void ApplyRowScatterRangeAvx512(const RowScatterPlan& plan,
                                                                           const RowScatterArrays& arrays,
                                                                           int64_t row_begin,
                                                                           int64_t row_end) {
  if (AddedRowScatterUpdatesOfWholeVectors<kWrap, T, Index>(plan, arrays, row_begin, row_end)) return;
  ApplyRowScatterRange<Avx512RowScatterCombine, kWrap, T, Index>(plan, arrays, row_begin, row_end);
}

template <typename T>
KILN_AVX512_LANES __attribute__((flatten)) void AddRowScatterElementsAvx512(T* destination, const T* addend,
                                                                            int64_t count) {
  Avx512RowScatterCombine::Apply(RowScatterCombiner::kAdd, destination, addend, count);
}
#endif  // __x86_64__

template <typename T>
void AddRowScatterElementsOfType(void* destination, const void* addend, int64_t count,
                                 [[maybe_unused]] RowScatterLanes lanes) {
  auto* to = static_cast<T*>(destination);
  const auto* from = static_cast<const T*>(addend);
#if defined(__x86_64__)
  if (lanes == RowScatterLanes::kWidest && HasAvx512Lanes()) {
    AddRowScatterElementsAvx512(to, from, count);
    return;
  }
#endif
  PortableRowScatterCombine::Apply(RowScatterCombiner::kAdd, to, from, count);
}

template <bool kWrap, typename T, typename Index>
void ApplyRowScatterRangeOfTypes(const RowScatterPlan& plan, const RowScatterArrays& arrays,
                                 int64_t row_begin, int64_t row_end, [[maybe_unused]] RowScatterLanes lanes) {
#if defined(__x86_64__)
  if (lanes == RowScatterLanes::kWidest && HasAvx512Lanes()) {
    ApplyRowScatterRangeAvx512<kWrap, T, Index>(plan, arrays, row_begin, row_end);
    return;
  }
#endif
  ApplyRowScatterRange<PortableRowScatterCombine, kWrap, T, Index>(plan, arrays, row_begin, row_end);
}

// Signed indices with the plan's wrap or without; unsigned ones are never
// wrapped (PlanRowScatter's callers wrap only signed ones).
template <typename T, typename Index>
void ApplyRowScatterRangeOfIndex(const RowScatterPlan& plan, const RowScatterArrays& arrays,
                                 int64_t row_begin, int64_t row_end, RowScatterLanes lanes) {
  if constexpr (std::is_signed_v<Index>) {
    if (plan.wrap_negative_indices) {
      ApplyRowScatterRangeOfTypes<true, T, Index>(plan, arrays, row_begin, row_end, lanes);
      return;
    }
  }
  ApplyRowScatterRangeOfTypes<false, T, Index>(plan, arrays, row_begin, row_end, lanes);
}

template <typename T>
void ApplyRowScatterRangeOfType(const RowScatterPlan& plan, const RowScatterArrays& arrays, int64_t row_begin,
                                int64_t row_end, RowScatterLanes lanes) {
  switch (plan.index_type) {
    case ElementType::kS32:
      ApplyRowScatterRangeOfIndex<T, int32_t>(plan, arrays, row_begin, row_end, lanes);
      break;
    case ElementType::kS64:
      ApplyRowScatterRangeOfIndex<T, int64_t>(plan, arrays, row_begin, row_end, lanes);
      break;
    case ElementType::kU32:
      ApplyRowScatterRangeOfIndex<T, uint32_t>(plan, arrays, row_begin, row_end, lanes);
      break;
    default: ApplyRowScatterRangeOfIndex<T, uint64_t>(plan, arrays, row_begin, row_end, lanes); break;
  }
}

}  // namespace

int64_t RowScatterUpdatePrefetchRows(int64_t row_bytes) {
  return std::max<int64_t>(kRowScatterUpdateStreamLeadBytes / std::max<int64_t>(row_bytes, 1), 1);
}

void ApplyRowScatterUpdates(const RowScatterPlan& plan, const RowScatterArrays& arrays, int64_t row_begin,
                            int64_t row_end, RowScatterLanes lanes) {
  // The element types PlanRowScatter accepts; integers of one width add
  // alike whatever their sign (wrap-around), so they share one loop.
  switch (plan.type) {
    case ElementType::kF32: ApplyRowScatterRangeOfType<float>(plan, arrays, row_begin, row_end, lanes); break;
    case ElementType::kF64:
      ApplyRowScatterRangeOfType<double>(plan, arrays, row_begin, row_end, lanes);
      break;
    case ElementType::kS32:
    case ElementType::kU32:
      ApplyRowScatterRangeOfType<uint32_t>(plan, arrays, row_begin, row_end, lanes);
      break;
    case ElementType::kBF16:
      ApplyRowScatterRangeOfType<bfloat16>(plan, arrays, row_begin, row_end, lanes);
      break;
    case ElementType::kF16: ApplyRowScatterRangeOfType<half>(plan, arrays, row_begin, row_end, lanes); break;
    default: ApplyRowScatterRangeOfType<uint64_t>(plan, arrays, row_begin, row_end, lanes); break;
  }
}

void AddRowScatterElements(ElementType type, void* destination, const void* addend, int64_t count,
                           RowScatterLanes lanes) {
  switch (type) {
    case ElementType::kF32: AddRowScatterElementsOfType<float>(destination, addend, count, lanes); break;
    case ElementType::kF64: AddRowScatterElementsOfType<double>(destination, addend, count, lanes); break;
    case ElementType::kS32:
    case ElementType::kU32: AddRowScatterElementsOfType<uint32_t>(destination, addend, count, lanes); break;
    case ElementType::kBF16: AddRowScatterElementsOfType<bfloat16>(destination, addend, count, lanes); break;
    case ElementType::kF16: AddRowScatterElementsOfType<half>(destination, addend, count, lanes); break;
    default: AddRowScatterElementsOfType<uint64_t>(destination, addend, count, lanes); break;
  }
}

}  // namespace kiln::cpu
