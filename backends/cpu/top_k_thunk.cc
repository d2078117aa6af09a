#include "backends/cpu/top_k_thunk.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
#include <limits>
#include <type_traits>
#include <vector>

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

template <typename T>
void TopKRows(const TopKGeometry& geometry, const T* input, T* values, int32_t* indices, int64_t begin,
              int64_t end) {
  const int64_t length = geometry.row_length;
  const int64_t k = geometry.k;
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
