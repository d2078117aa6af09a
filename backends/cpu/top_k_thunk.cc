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

// Scratch of one task for TopKRowF32Avx512, sized for rows of `length`.
struct TopKVectorScratch {
  explicit TopKVectorScratch(int64_t length)
      : keys(static_cast<size_t>((length + 15) / 16 * 16)),
        candidate_keys(keys.size() + 16),
        candidate_indices(keys.size() + 16),
        order(keys.size()) {}
  std::vector<int32_t> keys, candidate_keys, candidate_indices;
  std::vector<uint64_t> order;
};

// Lane-wise maxima split each row into 16 x `chunks` blocks: block (c, l)
// is lane l of the vectors of chunk c. Up to this many chunks the k-th
// greatest block maximum is found by counting.
constexpr int64_t kMaxVectorChunks = 8;

// Chunks of a vector-scanned row of `length` for `k`, or 0 when the row has
// too few vectors for k blocks or k needs more blocks than are counted.
int64_t TopKVectorChunks(int64_t length, int64_t k) {
  const int64_t vectors = (length + 15) / 16;
  // Two chunks at least: the floor is then the k-th of 32 maxima for k <=
  // 16, a count of 64 compares, with about 22 candidates per 1024 random
  // elements for k = 16 (four chunks: 256 compares, 18 candidates).
  const int64_t chunks = std::max<int64_t>(2, (k + 15) / 16);
  if (chunks > kMaxVectorChunks || chunks > vectors || k > 16 * chunks) return 0;
  return chunks;
}

// ScanRow for f32 in AVX-512 registers: the total-order keys of sixteen
// elements at a time (the tail lanes get the least key, and are masked out
// of the candidates), the lane-wise maxima of each chunk (16 x chunks
// blocks, no horizontal reductions), the k-th greatest of those maxima as
// the floor (counted with compare masks), then the keys at or above the
// floor compressed into a short candidate list with their indices. The
// candidates, as (key, complemented index) in 64 bits, are partially sorted
// so the larger key and then the smaller index come first.
__attribute__((target("avx512f"))) void TopKRowF32Avx512(const float* row, int64_t length, int64_t k,
                                                         bool largest, int64_t chunks,
                                                         TopKVectorScratch& scratch, float* values,
                                                         int32_t* indices) {
  const int64_t vectors = (length + 15) / 16;
  const __mmask16 all = 0xffff;
  const __m512i magnitude = _mm512_set1_epi32(INT32_MAX);
  const __m512i infinity = _mm512_set1_epi32(0x7f800000);
  const __m512i quiet = _mm512_set1_epi32(0x00400000);
  const __m512i flip = _mm512_set1_epi32(largest ? 0 : -1);
  const __m512i least = _mm512_set1_epi32(INT32_MIN);
  __m512i maxima[kMaxVectorChunks];
  int32_t* keys = scratch.keys.data();
  for (int64_t c = 0; c < chunks; ++c) {
    __m512i greatest = least;
    const int64_t end = vectors * (c + 1) / chunks;
    for (int64_t v = vectors * c / chunks; v < end; ++v) {
      const int64_t left = length - v * 16;
      const __mmask16 lanes = left >= 16 ? all : static_cast<__mmask16>((1u << left) - 1);
      __m512i bits = _mm512_maskz_loadu_epi32(lanes, row + v * 16);
      const __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_epi32(bits, magnitude), infinity);
      bits = _mm512_mask_or_epi32(bits, nan, bits, quiet);
      const __mmask16 negative = _mm512_cmplt_epi32_mask(bits, _mm512_setzero_si512());
      __m512i key = _mm512_xor_epi32(_mm512_mask_xor_epi32(bits, negative, bits, magnitude), flip);
      key = _mm512_mask_mov_epi32(least, lanes, key);
      _mm512_storeu_si512(keys + v * 16, key);
      greatest = _mm512_mask_max_epi32(greatest, all, greatest, key);
    }
    maxima[c] = greatest;
  }
  // The least block maximum with fewer than k block maxima greater than it.
  alignas(64) int32_t block_maxima[16 * kMaxVectorChunks];
  for (int64_t c = 0; c < chunks; ++c) _mm512_store_si512(block_maxima + 16 * c, maxima[c]);
  int32_t floor = INT32_MAX;
  for (int64_t i = 0; i < 16 * chunks; ++i) {
    const __m512i candidate = _mm512_set1_epi32(block_maxima[i]);
    int greater = 0;
    for (int64_t c = 0; c < chunks; ++c)
      greater += __builtin_popcount(_mm512_cmpgt_epi32_mask(maxima[c], candidate));
    floor = greater < k ? std::min(floor, block_maxima[i]) : floor;
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
  uint64_t* order = scratch.order.data();
  for (int64_t i = 0; i < count; ++i) {
    order[i] = (static_cast<uint64_t>(static_cast<uint32_t>(candidate_keys[i]) ^ 0x80000000u) << 32) |
               (0xffffffffu - static_cast<uint32_t>(candidate_indices[i]));
  }
  std::partial_sort(order, order + k, order + count, std::greater<uint64_t>());
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
  if constexpr (std::is_same_v<T, float>) {
    const int64_t chunks = HasAvx512ForTopK() ? TopKVectorChunks(length, k) : 0;
    if (chunks > 0) {
      TopKVectorScratch scratch(length);
      for (int64_t row = begin; row < end; ++row) {
        TopKRowF32Avx512(input + row * length, length, k, geometry.largest, chunks, scratch, values + row * k,
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
