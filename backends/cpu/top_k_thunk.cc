#include "backends/cpu/top_k_thunk.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <type_traits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "backends/cpu/thread_pool.h"

namespace kiln::cpu {
namespace {

// Elements a parallel task should scan at least, so scheduling stays cheap.
constexpr int64_t kTopKElementsPerTask = 16 * 1024;

// Elements whose greatest key the scan keeps: a row of fewer blocks than k is
// sorted instead.
constexpr int64_t kBlock = 16;

// The signed integer a key is: 32 bits for elements of up to 32 bits (halves
// widen to float), else 64.
template <typename T>
using KeyOf = std::conditional_t<sizeof(T) <= 4, int32_t, int64_t>;

// The total-order key of a float's bits (see OrderKey).
inline int32_t FloatBitsKey(int32_t bits) {
  const bool nan = (bits & INT32_MAX) > 0x7f800000;
  bits |= nan ? 0x00400000 : 0;
  return bits ^ ((bits >> 31) & INT32_MAX);
}

// A signed integer whose order is the element's order: the total order for
// floats (-NaN < -inf < ... < -0 < +0 < ... < inf < +NaN), reversed when the
// smallest come first, so a larger key always comes first. The interpreter
// orders floats through double, and widening a float to double quiets a
// signalling NaN; the quiet bit is set here too so NaNs compare as there.
template <typename T>
KeyOf<T> OrderKey(T value, bool largest) {
  KeyOf<T> key;
  if constexpr (std::is_same_v<T, double>) {
    const auto bits = std::bit_cast<int64_t>(value);
    key = bits ^ ((bits >> 63) & INT64_MAX);
  } else if constexpr (!std::is_integral_v<T>) {
    key = FloatBitsKey(std::bit_cast<int32_t>(static_cast<float>(value)));
  } else if constexpr (std::is_signed_v<T>) {
    key = static_cast<KeyOf<T>>(value);
  } else {
    // Unsigned: flipping the top bit of the widened value keeps its order.
    using Unsigned = std::make_unsigned_t<KeyOf<T>>;
    key = static_cast<KeyOf<T>>(static_cast<Unsigned>(value) ^ (Unsigned{1} << (sizeof(Unsigned) * 8 - 1)));
  }
  return largest ? key : ~key;
}

template <typename Key>
struct Candidate {
  Key key;
  int64_t index;
};

// The strict order of the answer: larger key first, equal keys in index
// order (which makes the answer unique).
// (A function object, so the sorts inline it.)
struct Before {
  template <typename Key>
  bool operator()(const Candidate<Key>& a, const Candidate<Key>& b) const {
    return a.key != b.key ? a.key > b.key : a.index < b.index;
  }
};

// keys[i] = OrderKey(row[i]) for the whole row, in one loop the compiler
// vectorises.
template <typename T, bool largest>
void RowKeys(const T* row, int64_t length, KeyOf<T>* keys) {
  if constexpr (std::is_same_v<T, float>) {
    // Through integer bits: the compiler vectorises no float bit_cast.
    for (int64_t i = 0; i < length; ++i) {
      int32_t bits;
      std::memcpy(&bits, row + i, sizeof(bits));
      keys[i] = largest ? FloatBitsKey(bits) : ~FloatBitsKey(bits);
    }
  } else {
    for (int64_t i = 0; i < length; ++i) keys[i] = OrderKey(row[i], largest);
  }
}

// Up to this many blocks the k-th greatest block key is found by counting,
// for each, the keys greater than it (no branch: cheaper than a selection's
// mispredicted partitions); above it, the count's square costs more.
constexpr int64_t kMaxCountedBlocks = 128;

// The k-th greatest of keys[0, size) (1 <= k <= size). `keys` has room for
// 2 * size (a copy to select in).
template <typename Key>
Key KthGreatest(Key* keys, int64_t size, int64_t k) {
  if (size <= kMaxCountedBlocks) {
    // The least key with fewer than k keys greater than it.
    Key least = std::numeric_limits<Key>::max();
    for (int64_t i = 0; i < size; ++i) {
      int32_t greater = 0;  // 32 bits, as wide as a key: more lanes
      for (int64_t j = 0; j < size; ++j) greater += keys[j] > keys[i] ? 1 : 0;
      least = greater < k ? std::min(least, keys[i]) : least;
    }
    return least;
  }
  Key* copy = keys + size;
  std::copy(keys, keys + size, copy);
  std::nth_element(copy, copy + (k - 1), copy + size, std::greater<Key>());
  return copy[k - 1];
}

// A row of at least k blocks: the k-th greatest of the blocks' greatest keys
// is a floor under the k-th greatest key of the row (k blocks each hold one
// at least as great), so only elements at or above the floor can be in the
// answer, and only blocks whose greatest key reaches it hold any. The keys
// and the blocks' greatest (vectorised; most of the time), then the elements
// at or above the floor, in index order, from the blocks that reach it,
// appended without a branch; the few candidates are then partially sorted.
// `keys` has room for the row, `block_greatest` for two keys per block,
// `candidates` for the whole row.
template <typename T, bool largest>
void ScanRow(const T* row, int64_t length, int64_t k, KeyOf<T>* keys, KeyOf<T>* block_greatest,
             Candidate<KeyOf<T>>* candidates) {
  using Key = KeyOf<T>;
  RowKeys<T, largest>(row, length, keys);
  const int64_t blocks = (length + kBlock - 1) / kBlock;
  const int64_t whole_blocks = length / kBlock;
  for (int64_t block = 0; block < whole_blocks; ++block) {
    const Key* block_keys = keys + block * kBlock;
    Key greatest = block_keys[0];
    for (int64_t j = 1; j < kBlock; ++j) greatest = std::max(greatest, block_keys[j]);
    block_greatest[block] = greatest;
  }
  if (whole_blocks < blocks) {
    block_greatest[whole_blocks] = *std::max_element(keys + whole_blocks * kBlock, keys + length);
  }
  const Key floor = KthGreatest(block_greatest, blocks, k);
  int64_t count = 0;
  for (int64_t block = 0; block < blocks; ++block) {
    if (block_greatest[block] < floor) continue;
    const int64_t end = std::min(length, (block + 1) * kBlock);
    for (int64_t i = block * kBlock; i < end; ++i) {
      candidates[count] = {keys[i], i};
      count += keys[i] >= floor ? 1 : 0;
    }
  }
  std::partial_sort(candidates, candidates + k, candidates + count, Before());
}

// Rows of fewer blocks than k: keys once, then a partial sort; ties broken
// by index make the order strict, so the answer is the stable one.
template <typename T>
void SortRow(const T* row, int64_t length, int64_t k, bool largest, Candidate<KeyOf<T>>* all) {
  for (int64_t i = 0; i < length; ++i) all[i] = {OrderKey(row[i], largest), i};
  std::partial_sort(all, all + k, all + length, Before());
}

#if defined(__x86_64__)
bool HasAvx512ForTopK() {
  static const bool has_avx512 = __builtin_cpu_supports("avx512f");
  return has_avx512;
}

// Element types whose keys the vector scan makes sixteen at a time: f32,
// bf16 (widened to f32's bits), f16 (its own bits, sign-extended), 8-, 16-
// and 32-bit integers (widened to 32), whose total-order keys are 32 bits
// wide; f64 and 64-bit integers by the high halves of theirs (a coarse key:
// a greater one means a greater element, an equal one nothing), the
// candidates then ordered by their whole keys.
template <typename T>
constexpr bool kTopKVectorKeys =
    std::is_same_v<T, float> || std::is_same_v<T, bfloat16> || std::is_same_v<T, half> ||
    std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t> || std::is_same_v<T, int16_t> ||
    std::is_same_v<T, uint16_t> || std::is_same_v<T, int32_t> || std::is_same_v<T, uint32_t> ||
    std::is_same_v<T, double> || std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>;

// Scratch of one task for TopKRowAvx512, sized for rows of `length` and
// `chunks` chunks.
struct TopKVectorScratch {
  TopKVectorScratch(int64_t length, int64_t chunks)
      : keys(static_cast<size_t>((length + 15) / 16 * 16)),
        candidate_keys(keys.size() + 16),
        candidate_indices(keys.size() + 16),
        order(keys.size()),
        block_maxima(static_cast<size_t>(32 * chunks)) {}
  std::vector<int32_t> keys, candidate_keys, candidate_indices;
  std::vector<uint64_t> order;
  std::vector<int32_t> block_maxima;      // 16 per chunk, and a copy to select in
  std::vector<Candidate<int64_t>> whole;  // 64-bit elements' candidates by their whole keys
};

// Lane-wise maxima split each row into 16 x `chunks` blocks: block (c, l)
// is lane l of the vectors of chunk c. Up to this many chunks the k-th
// greatest block maximum is found by counting; above, by selection.
constexpr int64_t kMaxCountedVectorChunks = 8;

// Chunks of a vector-scanned row of `length` for `k`, or 0 when the row has
// too few vectors for k blocks.
int64_t TopKVectorChunks(int64_t length, int64_t k) {
  const int64_t vectors = (length + 15) / 16;
  // Two chunks at least: the floor is then the k-th of 32 maxima for k <=
  // 16, a count of 64 compares, with about 22 candidates per 1024 random
  // elements for k = 16 (four chunks: 256 compares, 18 candidates). Above
  // 128, four blocks per answer element, so the floor stays well above the
  // least of the row's maxima and few elements reach it.
  const int64_t chunks = k <= 16 * kMaxCountedVectorChunks ? std::max<int64_t>(2, (k + 15) / 16)
                                                           : std::min(vectors, (4 * k + 15) / 16);
  if (chunks > vectors || k > 16 * chunks) return 0;
  return chunks;
}

// The high halves of the total-order keys (OrderKey, largest first) of
// eight 64-bit elements at `at`, of which `left` (when below 8) are in the row.
template <typename T>
__attribute__((target("avx512f"))) __m256i TopKHighHalves(const T* at, int64_t left) {
  const __mmask8 present = left >= 8   ? static_cast<__mmask8>(0xff)
                           : left <= 0 ? static_cast<__mmask8>(0)
                                       : static_cast<__mmask8>((1u << left) - 1);
  __m512i key = _mm512_maskz_loadu_epi64(present, at);
  if constexpr (std::is_same_v<T, double>) {
    const __mmask8 negative = _mm512_cmplt_epi64_mask(key, _mm512_setzero_si512());
    key = _mm512_mask_xor_epi64(key, negative, key, _mm512_set1_epi64(INT64_MAX));
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    key = _mm512_xor_epi64(key, _mm512_set1_epi64(INT64_MIN));
  }
  return _mm512_maskz_cvtepi64_epi32(0xff, _mm512_maskz_srai_epi64(0xff, key, 32));
}

// Orders the first k of `count` candidates (a strict order: keys with
// their indices): a selection, then a sort of the k, rather than
// std::partial_sort, whose heap is slow when k is most of the candidates
// (k above 128 on short rows).
template <typename Candidates, typename Order>
void SelectAndSortFirst(Candidates* candidates, int64_t k, int64_t count, Order order) {
  if (count > k) std::nth_element(candidates, candidates + (k - 1), candidates + count, order);
  std::sort(candidates, candidates + k, order);
}

// The bytes of sixteen 1- or 2-byte elements at `at`, of which `left` (when
// below 16) are in the row: zeros past them, never a read past the row.
template <typename T, typename Vector>
__attribute__((target("avx512f"))) Vector TopKSixteenNarrow(const T* at, int64_t left) {
  static_assert(sizeof(Vector) == 16 * sizeof(T));
  if (left >= 16) {
    Vector loaded;
    std::memcpy(&loaded, at, sizeof(Vector));
    return loaded;
  }
  alignas(Vector) uint8_t bytes[sizeof(Vector)] = {};
  std::memcpy(bytes, at, static_cast<size_t>(std::max<int64_t>(left, 0)) * sizeof(T));
  Vector loaded;
  std::memcpy(&loaded, bytes, sizeof(Vector));
  return loaded;
}

// (Here and below the masked forms of the intrinsics, every lane on: GCC 12
// inlines the unmasked ones with an undefined register as their merge
// source, which -Wmaybe-uninitialized refuses at -O3.)
// The total-order keys (OrderKey, largest first) of sixteen elements at
// `at`, of which `left` (when below 16) are in the row.
template <typename T>
__attribute__((target("avx512f"))) __m512i TopKVectorKeys(const T* at, int64_t left) {
  const __mmask16 lanes =
      left >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << left) - 1);
  __m512i bits;
  if constexpr (sizeof(T) == 8) {
    // Eight 64-bit keys at a time, their high halves packed.
    const __m512i low = _mm512_maskz_inserti64x4(0xff, _mm512_setzero_si512(), TopKHighHalves(at, left), 0);
    return _mm512_maskz_inserti64x4(0xff, low, TopKHighHalves(at + 8, left - 8), 1);
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    // Sixteen bf16 are the high halves of sixteen f32.
    const __m256i loaded = TopKSixteenNarrow<T, __m256i>(at, left);
    bits = _mm512_maskz_slli_epi32(0xffff, _mm512_maskz_cvtepu16_epi32(0xffff, loaded), 16);
  } else if constexpr (std::is_same_v<T, half>) {
    // f16's total order on its own bits, sign-extended (the order of the
    // f32 it widens to): NaNs quieted as the widening quiets them,
    // negatives' magnitudes reversed.
    bits = _mm512_maskz_cvtepi16_epi32(0xffff, TopKSixteenNarrow<T, __m256i>(at, left));
    const __m512i magnitude = _mm512_set1_epi32(0x7fff);
    const __mmask16 nan =
        _mm512_cmpgt_epi32_mask(_mm512_and_epi32(bits, magnitude), _mm512_set1_epi32(0x7c00));
    bits = _mm512_mask_or_epi32(bits, nan, bits, _mm512_set1_epi32(0x0200));
    const __mmask16 negative = _mm512_cmplt_epi32_mask(bits, _mm512_setzero_si512());
    return _mm512_mask_xor_epi32(bits, negative, bits, magnitude);
  } else if constexpr (std::is_same_v<T, int16_t>) {
    return _mm512_maskz_cvtepi16_epi32(0xffff, TopKSixteenNarrow<T, __m256i>(at, left));
  } else if constexpr (std::is_same_v<T, uint16_t>) {
    // Zero-extended: non-negative, in order.
    return _mm512_maskz_cvtepu16_epi32(0xffff, TopKSixteenNarrow<T, __m256i>(at, left));
  } else if constexpr (std::is_same_v<T, int8_t>) {
    return _mm512_maskz_cvtepi8_epi32(0xffff, TopKSixteenNarrow<T, __m128i>(at, left));
  } else if constexpr (std::is_same_v<T, uint8_t>) {
    return _mm512_maskz_cvtepu8_epi32(0xffff, TopKSixteenNarrow<T, __m128i>(at, left));
  } else {
    bits = _mm512_maskz_loadu_epi32(lanes, at);
  }
  if constexpr (std::is_same_v<T, int32_t>) {
    return bits;
  } else if constexpr (std::is_same_v<T, uint32_t>) {
    return _mm512_xor_epi32(bits, _mm512_set1_epi32(INT32_MIN));
  } else {
    // FloatBitsKey: NaNs quieted, negatives' magnitudes reversed.
    const __m512i magnitude = _mm512_set1_epi32(INT32_MAX);
    const __mmask16 nan =
        _mm512_cmpgt_epi32_mask(_mm512_and_epi32(bits, magnitude), _mm512_set1_epi32(0x7f800000));
    bits = _mm512_mask_or_epi32(bits, nan, bits, _mm512_set1_epi32(0x00400000));
    const __mmask16 negative = _mm512_cmplt_epi32_mask(bits, _mm512_setzero_si512());
    return _mm512_mask_xor_epi32(bits, negative, bits, magnitude);
  }
}

// ScanRow in AVX-512 registers for elements with 32-bit keys: the keys of
// sixteen elements at a time (the tail lanes get the least key, and are
// masked out of the candidates), the lane-wise maxima of each chunk
// (16 x chunks blocks, no horizontal reductions), the k-th greatest of those
// maxima as the floor (counted with compare masks, or selected when there
// are many), then the keys at or above the floor compressed into a short
// candidate list with their indices. The candidates, as (key, complemented
// index) in 64 bits, are partially sorted so the larger key and then the
// smaller index come first.
template <typename T>
__attribute__((target("avx512f"))) void TopKRowAvx512(const T* row, int64_t length, int64_t k, bool largest,
                                                      int64_t chunks, TopKVectorScratch& scratch, T* values,
                                                      int32_t* indices) {
  const int64_t vectors = (length + 15) / 16;
  const __mmask16 all = 0xffff;
  const __m512i flip = _mm512_set1_epi32(largest ? 0 : -1);
  const __m512i least = _mm512_set1_epi32(INT32_MIN);
  int32_t* keys = scratch.keys.data();
  int32_t* block_maxima = scratch.block_maxima.data();
  for (int64_t c = 0; c < chunks; ++c) {
    __m512i greatest = least;
    const int64_t end = vectors * (c + 1) / chunks;
    for (int64_t v = vectors * c / chunks; v < end; ++v) {
      const int64_t left = length - v * 16;
      const __mmask16 lanes = left >= 16 ? all : static_cast<__mmask16>((1u << left) - 1);
      __m512i key = _mm512_xor_epi32(TopKVectorKeys(row + v * 16, left), flip);
      key = _mm512_mask_mov_epi32(least, lanes, key);
      _mm512_storeu_si512(keys + v * 16, key);
      greatest = _mm512_mask_max_epi32(greatest, all, greatest, key);
    }
    _mm512_storeu_si512(block_maxima + 16 * c, greatest);
  }
  // The k-th greatest block maximum: the least with fewer than k greater.
  int32_t floor = INT32_MAX;
  const int64_t maxima = 16 * chunks;
  if (chunks <= kMaxCountedVectorChunks) {
    for (int64_t i = 0; i < maxima; ++i) {
      const __m512i candidate = _mm512_set1_epi32(block_maxima[i]);
      int greater = 0;
      for (int64_t c = 0; c < chunks; ++c) {
        greater +=
            __builtin_popcount(_mm512_cmpgt_epi32_mask(_mm512_loadu_si512(block_maxima + 16 * c), candidate));
      }
      floor = greater < k ? std::min(floor, block_maxima[i]) : floor;
    }
  } else {
    int32_t* copy = block_maxima + maxima;
    std::copy(block_maxima, block_maxima + maxima, copy);
    std::nth_element(copy, copy + (k - 1), copy + maxima, std::greater<int32_t>());
    floor = copy[k - 1];
  }
  const __m512i threshold = _mm512_set1_epi32(floor);
  const __m512i step = _mm512_set1_epi32(16);
  __m512i index = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  int32_t* candidate_keys = scratch.candidate_keys.data();
  int32_t* candidate_indices = scratch.candidate_indices.data();
  int64_t count = 0;
  for (int64_t v = 0; v < vectors; ++v, index = _mm512_add_epi32(index, step)) {
    const int64_t left = length - v * 16;
    const __mmask16 lanes = left >= 16 ? all : static_cast<__mmask16>((1u << left) - 1);
    const __m512i key = _mm512_loadu_si512(keys + v * 16);
    const __mmask16 chosen = _mm512_mask_cmpge_epi32_mask(lanes, key, threshold);
    if (chosen == 0) continue;
    _mm512_storeu_si512(candidate_keys + count, _mm512_maskz_compress_epi32(chosen, key));
    _mm512_storeu_si512(candidate_indices + count, _mm512_maskz_compress_epi32(chosen, index));
    count += __builtin_popcount(chosen);
  }
  if constexpr (sizeof(T) == 8) {
    std::vector<Candidate<int64_t>>& whole = scratch.whole;
    whole.clear();
    for (int64_t i = 0; i < count; ++i) {
      const int64_t source = candidate_indices[i];
      whole.push_back({OrderKey(row[source], largest), source});
    }
    SelectAndSortFirst(whole.data(), k, count, Before());
    for (int64_t i = 0; i < k; ++i) {
      const int64_t source = whole[static_cast<size_t>(i)].index;
      values[i] = row[source];
      indices[i] = static_cast<int32_t>(source);
    }
    return;
  }
  uint64_t* order = scratch.order.data();
  for (int64_t i = 0; i < count; ++i) {
    order[i] = (static_cast<uint64_t>(static_cast<uint32_t>(candidate_keys[i]) ^ 0x80000000u) << 32) |
               (0xffffffffu - static_cast<uint32_t>(candidate_indices[i]));
  }
  SelectAndSortFirst(order, k, count, std::greater<uint64_t>());
  for (int64_t i = 0; i < k; ++i) {
    const int64_t source = 0xffffffffu - static_cast<uint32_t>(order[i]);
    values[i] = row[source];
    indices[i] = static_cast<int32_t>(source);
  }
}
#endif

template <typename T>
void TopKRows(const TopKGeometry& geometry, const T* input, T* values, int32_t* indices, int64_t begin,
              int64_t end) {
  const int64_t length = geometry.row_length;
  const int64_t k = geometry.k;
#if defined(__x86_64__)
  if constexpr (kTopKVectorKeys<T>) {
    const int64_t chunks = HasAvx512ForTopK() ? TopKVectorChunks(length, k) : 0;
    if (chunks > 0) {
      TopKVectorScratch scratch(length, chunks);
      for (int64_t row = begin; row < end; ++row) {
        TopKRowAvx512<T>(input + row * length, length, k, geometry.largest, chunks, scratch, values + row * k,
                         indices + row * k);
      }
      return;
    }
  }
#endif
  const int64_t blocks = (length + kBlock - 1) / kBlock;
  const bool scanned = blocks >= k;
  std::vector<Candidate<KeyOf<T>>> candidates(static_cast<size_t>(length) + 1);
  std::vector<KeyOf<T>> keys(static_cast<size_t>(scanned ? length : 0));
  std::vector<KeyOf<T>> block_greatest(static_cast<size_t>(scanned ? 2 * blocks : 0));
  for (int64_t row = begin; row < end; ++row) {
    const T* base = input + row * length;
    if (scanned && geometry.largest) {
      ScanRow<T, true>(base, length, k, keys.data(), block_greatest.data(), candidates.data());
    } else if (scanned) {
      ScanRow<T, false>(base, length, k, keys.data(), block_greatest.data(), candidates.data());
    } else {
      SortRow(base, length, k, geometry.largest, candidates.data());
    }
    for (int64_t i = 0; i < k; ++i) {
      const int64_t source = candidates[static_cast<size_t>(i)].index;
      values[row * k + i] = base[source];
      indices[row * k + i] = static_cast<int32_t>(source);
    }
  }
}

}  // namespace

Status TopKThunk::Run(ExecutionContext& context) const {
  if (!Supports(geometry_.type)) return Internal("cpu: topk cannot order ", ElementTypeName(geometry_.type));
  if (geometry_.rows == 0 || geometry_.k == 0) return OkStatus();
  void* input = context.slots[inputs_[0]];
  void* values = context.slots[outputs_[0]];
  auto* indices = static_cast<int32_t*>(context.slots[outputs_[1]]);
  auto rows = [&](int64_t begin, int64_t end) {
    DispatchElementType(geometry_.type, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, complex64> ||
                    std::is_same_v<T, complex128>) {
        // Refused by Supports above.
      } else {
        TopKRows<T>(geometry_, static_cast<const T*>(input), static_cast<T*>(values), indices, begin, end);
      }
    });
  };
  const int64_t grain =
      std::max<int64_t>(1, kTopKElementsPerTask / std::max<int64_t>(1, geometry_.row_length));
  if (geometry_.rows <= grain || context.pool == nullptr || context.pool->num_threads() == 1) {
    rows(0, geometry_.rows);
  } else {
    context.pool->ParallelFor(geometry_.rows, grain, rows);
  }
  return OkStatus();
}

}  // namespace kiln::cpu
