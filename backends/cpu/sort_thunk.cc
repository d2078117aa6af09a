#include "backends/cpu/sort_thunk.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>

#include "backends/cpu/radix_sort.h"
#include "backends/cpu/thread_pool.h"
#include "backends/cpu/vector_sort.h"

namespace kiln::cpu {
namespace {

// Elements a parallel task should sort at least, so scheduling stays cheap.
constexpr int64_t kSortElementsPerTask = 16 * 1024;

// --- Sorting by key ------------------------------------------------------------

// Writes target[first + p * inner] = source[first + index_of(p) * inner]
// for p in [p_begin, p_end).
template <size_t kBytes, typename IndexOf>
void GatherSliceElements(const uint8_t* source, uint8_t* target, int64_t first, int64_t inner,
                         const IndexOf& index_of, size_t p_begin, size_t p_end) {
  for (size_t p = p_begin; p < p_end; ++p) {
    std::memcpy(target + static_cast<size_t>(first + static_cast<int64_t>(p) * inner) * kBytes,
                source + static_cast<size_t>(first + static_cast<int64_t>(index_of(p)) * inner) * kBytes,
                kBytes);
  }
}

template <typename IndexOf>
void GatherOperand(const uint8_t* source, uint8_t* target, size_t bytes, int64_t first, int64_t inner,
                   const IndexOf& index_of, size_t p_begin, size_t p_end) {
  switch (bytes) {
    case 1: return GatherSliceElements<1>(source, target, first, inner, index_of, p_begin, p_end);
    case 2: return GatherSliceElements<2>(source, target, first, inner, index_of, p_begin, p_end);
    case 4: return GatherSliceElements<4>(source, target, first, inner, index_of, p_begin, p_end);
    case 8: return GatherSliceElements<8>(source, target, first, inner, index_of, p_begin, p_end);
    case 16: return GatherSliceElements<16>(source, target, first, inner, index_of, p_begin, p_end);
    default:
      for (size_t p = p_begin; p < p_end; ++p) {
        std::memcpy(target + static_cast<size_t>(first + static_cast<int64_t>(p) * inner) * bytes,
                    source + static_cast<size_t>(first + static_cast<int64_t>(index_of(p)) * inner) * bytes,
                    bytes);
      }
  }
}

// What KeySortSlices needs of the thunk.
struct KeySortJob {
  const SortKeyPlan* plan;
  const std::vector<int>* inputs;
  const std::vector<int>* outputs;
  const std::vector<int>* element_bytes;
  const std::vector<bool>* generated_positions;  // per operand
  int64_t length;
  int64_t inner;
  uint32_t* radix_scratch;  // `length` words for the radix sort, or null
};

// A slice at least this long spreads its passes over the pool's threads and
// is split into one part per thread before it is sorted.
constexpr size_t kLargeSlice = 64 * 1024;
// Slices up to this long are sorted in buffers each thread keeps.
constexpr size_t kCachedSlice = 64 * 1024;
// Elements a pass over one long slice gives each parallel task.
constexpr int64_t kSortPassElementsPerTask = 64 * 1024;

// Runs `body(begin, end)` over [0, n): split over `pool`'s threads for a
// long slice, in one go otherwise.
template <typename Body>
void OverSlice(size_t n, const IntraOpThreadPool* pool, const Body& body) {
  if (pool != nullptr && pool->num_threads() > 1 && n >= kLargeSlice) {
    pool->ParallelFor(static_cast<int64_t>(n), kSortPassElementsPerTask, [&](int64_t begin, int64_t end) {
      body(static_cast<size_t>(begin), static_cast<size_t>(end));
    });
  } else {
    body(0, n);
  }
}

// An element's bits as an unsigned key in one comparator order, without a
// branch, so the loops over a slice's elements vectorise (with a switch per
// element, encoding and decoding 1M f32 keys took as long as sorting them).
template <typename U, SortKeyPlan::Order kOrder>
struct OrderCoder {
  static constexpr int kTopBit = static_cast<int>(sizeof(U)) * 8 - 1;
  U sign;
  U exponent;
  U nan_bits;
  U zero_bits;
  U integer_flip;  // the sign bit for signed integers, else 0
  U direction;     // all ones for a descending sort, else 0

  explicit OrderCoder(const SortKeyPlan& plan)
      : sign(static_cast<U>(U{1} << kTopBit)),
        exponent(FloatBitLayoutOf(plan.type).has_value()
                     ? static_cast<U>(FloatBitLayoutOf(plan.type)->exponent)
                     : U{0}),
        nan_bits(static_cast<U>(plan.nan_bits)),
        zero_bits(static_cast<U>(plan.zero_bits)),
        integer_flip(IsSignedIntegral(plan.type) ? sign : U{0}),
        direction(plan.descending ? static_cast<U>(~U{0}) : U{0}) {}

  // A NaN's key under the partial order (kFloat) is meaningless: callers
  // count NaNs first (IsNan).
  U Encode(U bits) const {
    if constexpr (kOrder == SortKeyPlan::Order::kInteger) {
      return static_cast<U>(bits ^ integer_flip ^ direction);
    } else {
      const auto magnitude = static_cast<U>(bits & static_cast<U>(~sign));
      U value = bits;
      if constexpr (kOrder == SortKeyPlan::Order::kFloat) value = magnitude == 0 ? U{0} : bits;
      if constexpr (kOrder == SortKeyPlan::Order::kCanonicalTotalOrder)
        value = magnitude > exponent ? nan_bits : magnitude == 0 ? zero_bits : bits;
      // Negative values flip every bit, others set the sign bit.
      const auto negative = static_cast<U>(U{0} - static_cast<U>(value >> kTopBit));
      return static_cast<U>(value ^ static_cast<U>(negative | sign) ^ direction);
    }
  }
  // The bits a key stands for; a class of equal keys (zeros, NaNs) decodes
  // to its representative (the bits Encode substituted).
  U Decode(U key) const {
    key = static_cast<U>(key ^ direction);
    if constexpr (kOrder == SortKeyPlan::Order::kInteger) {
      return static_cast<U>(key ^ integer_flip);
    } else {
      const auto was_negative = static_cast<U>(static_cast<U>(key >> kTopBit) - U{1});
      return static_cast<U>(key ^ static_cast<U>(was_negative | sign));
    }
  }
  bool IsNan(U bits) const {
    if constexpr (kOrder == SortKeyPlan::Order::kInteger) return false;
    return static_cast<U>(bits & static_cast<U>(~sign)) > exponent;
  }
  bool IsZero(U bits) const {
    if constexpr (kOrder == SortKeyPlan::Order::kInteger) return false;
    return static_cast<U>(bits & static_cast<U>(~sign)) == 0;
  }
  // Equal keys stand for different bits: +0 and -0 under the float orders,
  // every NaN under the canonical total order.
  static constexpr bool kZerosTie =
      kOrder == SortKeyPlan::Order::kFloat || kOrder == SortKeyPlan::Order::kCanonicalTotalOrder;
  static constexpr bool kNansTie = kOrder == SortKeyPlan::Order::kCanonicalTotalOrder;
  U ZeroRepresentative() const { return kOrder == SortKeyPlan::Order::kFloat ? U{0} : zero_bits; }
};

// Whether any of `n` elements `inner` apart is a NaN (only the partial
// float order has keys no comparison orders). Flags are OR-ed in the
// elements' own width, so the loop over a contiguous slice vectorises.
template <typename U, SortKeyPlan::Order kOrder>
bool AnyNan(const OrderCoder<U, kOrder>& coder, const U* source, int64_t inner, size_t n,
            const IntraOpThreadPool* pool) {
  if constexpr (kOrder != SortKeyPlan::Order::kFloat) return false;
  std::atomic<bool> any{false};
  OverSlice(n, pool, [&](size_t begin, size_t end) {
    const OrderCoder<U, kOrder> local = coder;
    U flags = 0;
    if (inner == 1) {
      for (size_t p = begin; p < end; ++p) flags |= local.IsNan(source[p]) ? U{1} : U{0};
    } else {
      for (size_t p = begin; p < end; ++p)
        flags |= local.IsNan(source[static_cast<int64_t>(p) * inner]) ? U{1} : U{0};
    }
    if (flags != 0) any = true;
  });
  return any.load();
}

// Sorts keys[0, n), words whose top `key_bits` bits are the key and whose
// others (a position, or none) are in ascending order: a long slice of
// 4-byte words by a radix sort of the key bits (radix_sort.h); others on one thread, or for a long slice
// split into one part per thread of `pool` around keys sampled from it (each part's keys below the next
// part's), and the parts sorted in parallel. Splitting costs one partition
// pass per halving (VQSort's own, vectorised).
template <typename K>
void SortKeys(K* keys, size_t n, int key_bits, uint32_t* radix_scratch, const IntraOpThreadPool* pool) {
  if constexpr (std::is_same_v<K, uint32_t>) {
    if (n >= kRadixSortMinKeys) {
      // As the key buffers: a thread keeps a short slice's scratch, a long
      // slice's is freed after the sort.
      thread_local std::unique_ptr<uint32_t[]> cached;
      thread_local size_t cached_size = 0;
      std::unique_ptr<uint32_t[]> owned;
      uint32_t* scratch = radix_scratch;
      if (scratch != nullptr) {
        // The thunk's arena slot.
      } else if (n <= kCachedSlice) {
        if (cached_size < n) {
          cached = std::make_unique_for_overwrite<uint32_t[]>(kCachedSlice);
          cached_size = kCachedSlice;
        }
        scratch = cached.get();
      } else {
        owned = std::make_unique_for_overwrite<uint32_t[]>(n);
        scratch = owned.get();
      }
      RadixSortByKeyBits(keys, scratch, n, key_bits, pool);
      return;
    }
  }
  if constexpr (std::is_same_v<K, uint32_t> || std::is_same_v<K, uint64_t>) {
    if (pool != nullptr && pool->num_threads() > 1 && n >= kLargeSlice) {
      std::vector<std::pair<size_t, size_t>> parts;
      constexpr size_t kSamples = 255;
      std::vector<K> sample(kSamples);
      // Splits [begin, end) into `count` parts of about equal size.
      auto split = [&](auto& self, size_t begin, size_t end, int count) -> void {
        const size_t length = end - begin;
        if (count <= 1 || length < kLargeSlice / 2) {
          parts.emplace_back(begin, end);
          return;
        }
        const int left_count = count / 2;
        for (size_t i = 0; i < kSamples; ++i) sample[i] = keys[begin + (2 * i + 1) * length / (2 * kSamples)];
        std::sort(sample.begin(), sample.end());
        const K pivot = sample[kSamples * static_cast<size_t>(left_count) / static_cast<size_t>(count)];
        size_t bound = VectorPartition(keys + begin, length, pivot);
        // Every key <= the pivot (many equal keys): split below the pivot.
        if (bound == length && pivot > 0)
          bound = VectorPartition(keys + begin, length, static_cast<K>(pivot - 1));
        if (bound == 0 || bound == length) {
          parts.emplace_back(begin, end);
          return;
        }
        self(self, begin, begin + bound, left_count);
        self(self, begin + bound, end, count - left_count);
      };
      split(split, 0, n, pool->num_threads());
      pool->ParallelFor(static_cast<int64_t>(parts.size()), 1, [&](int64_t first, int64_t last) {
        for (auto i = static_cast<size_t>(first); i < static_cast<size_t>(last); ++i) {
          VectorSortAscending(keys + parts[i].first, parts[i].second - parts[i].first);
        }
      });
      return;
    }
  }
  VectorSortAscending(keys, n);
}

// Whether a tied class (OrderCoder::kZerosTie, kNansTie) has members whose
// bits are not the class's representative.
struct TiedOthers {
  bool zeros = false;
  bool nans = false;
};

// Collects TiedOthers over the keys an encode or pack pass meets: flags
// OR-ed in the keys' width with `&`, not `&&` (no branch), so that the
// pass's loop still vectorises.
template <typename U, SortKeyPlan::Order kOrder>
class TiedOthersTracker {
 public:
  explicit TiedOthersTracker(const OrderCoder<U, kOrder>& coder)
      : zero_representative_(coder.ZeroRepresentative()), nan_representative_(coder.nan_bits) {}
  [[gnu::always_inline]] void Note(const OrderCoder<U, kOrder>& coder, U bits) {
    if constexpr (OrderCoder<U, kOrder>::kZerosTie)
      zeros_ |=
          static_cast<U>(static_cast<U>(coder.IsZero(bits)) & static_cast<U>(bits != zero_representative_));
    if constexpr (OrderCoder<U, kOrder>::kNansTie)
      nans_ |=
          static_cast<U>(static_cast<U>(coder.IsNan(bits)) & static_cast<U>(bits != nan_representative_));
  }
  TiedOthers Found() const { return TiedOthers{zeros_ != 0, nans_ != 0}; }

 private:
  U zero_representative_, nan_representative_;
  U zeros_ = 0, nans_ = 0;
};

// visit(p, source[p * inner]) for p in [begin, end), a contiguous slice's
// loop apart from a strided one's so that it vectorises.
template <typename U, typename Visit>
[[gnu::always_inline]] inline void ForEachSliceBits(const U* source, int64_t inner, size_t begin, size_t end,
                                                    Visit& visit) {
  if (inner == 1) {
    for (size_t p = begin; p < end; ++p) visit(p, source[p]);
  } else {
    for (size_t p = begin; p < end; ++p) visit(p, source[static_cast<int64_t>(p) * inner]);
  }
}

// keys[p] = the key of source[p * inner] for p in [begin, end). The coder
// comes by value, the keys through a restrict pointer and the flags are
// OR-ed in the keys' width, so that a contiguous slice's loop vectorises.
template <typename U, typename W, SortKeyPlan::Order kOrder>
[[gnu::always_inline]] inline TiedOthers EncodeLoneKeysBody(const OrderCoder<U, kOrder> coder,
                                                            const U* source, int64_t inner,
                                                            W* __restrict keys, size_t begin, size_t end) {
  TiedOthersTracker<U, kOrder> tied(coder);
  auto encode = [&](size_t p, U bits) {
    keys[p] = static_cast<W>(coder.Encode(bits));
    tied.Note(coder, bits);
  };
  ForEachSliceBits(source, inner, begin, end, encode);
  return tied.Found();
}

// target[p * inner] = the bits keys[p] stands for, for p in [begin, end)
// (keys may be target itself).
template <typename U, typename W, SortKeyPlan::Order kOrder>
[[gnu::always_inline]] inline void DecodeLoneKeysBody(const OrderCoder<U, kOrder> coder, const W* keys,
                                                      U* target, int64_t inner, size_t begin, size_t end) {
  if (inner == 1) {
    for (size_t p = begin; p < end; ++p) target[p] = coder.Decode(static_cast<U>(keys[p]));
  } else {
    for (size_t p = begin; p < end; ++p)
      target[static_cast<int64_t>(p) * inner] = coder.Decode(static_cast<U>(keys[p]));
  }
}

// The unsigned word a lone key is sorted as: itself, or a 1-byte key
// widened to 2 bytes (the narrowest VQSort sorts).
template <typename U>
using LoneWord = std::conditional_t<sizeof(U) == 1, uint16_t, U>;

// Sorts one slice of a single operand: its keys alone are sorted and decoded
// back into the output (a contiguous slice's keys are encoded into the output
// itself). Where a class of tied keys (OrderCoder::kZerosTie, kNansTie) holds
// bits other than its representative, its run of the result is rewritten
// with the slice's members in their original order, as a stable sort leaves
// them. False, with nothing written, for a NaN under the partial order.
template <typename U, SortKeyPlan::Order kOrder>
bool SortLoneSlice(const OrderCoder<U, kOrder>& coder, const U* source, U* target, int64_t inner, size_t n,
                   uint32_t* radix_scratch, const IntraOpThreadPool* pool) {
  using W = LoneWord<U>;
  if (AnyNan(coder, source, inner, n, pool)) return false;
  thread_local std::vector<W> cached;
  std::vector<W> owned;
  W* keys = nullptr;
  if constexpr (std::is_same_v<W, U>) {
    if (inner == 1) keys = target;
  }
  if (keys == nullptr) {
    std::vector<W>& memory = n <= kCachedSlice ? cached : owned;
    if (memory.size() < n) memory.resize(n);
    keys = memory.data();
  }
  std::atomic<bool> other_zeros{false}, other_nans{false};  // tied members that are not the representative
  const U zero_representative = coder.ZeroRepresentative();
  OverSlice(n, pool, [&](size_t begin, size_t end) {
    const TiedOthers others = EncodeLoneKeys(coder, source, inner, keys, begin, end);
    if (others.zeros) other_zeros = true;
    if (others.nans) other_nans = true;
  });
  SortKeys(keys, n, static_cast<int>(sizeof(W)) * 8, radix_scratch, pool);
  // Where each run to rewrite starts, found before decoding overwrites keys.
  const auto run_start = [&](U representative) {
    return static_cast<size_t>(
        std::lower_bound(keys, keys + n, static_cast<W>(coder.Encode(representative))) - keys);
  };
  const size_t zeros_start = other_zeros ? run_start(zero_representative) : 0;
  const size_t nans_start = other_nans ? run_start(coder.nan_bits) : 0;
  OverSlice(n, pool,
            [&](size_t begin, size_t end) { DecodeLoneKeys(coder, keys, target, inner, begin, end); });
  const auto at = [inner](size_t p) { return static_cast<size_t>(static_cast<int64_t>(p) * inner); };
  if (other_zeros) {
    size_t out = zeros_start;
    for (size_t p = 0; p < n; ++p) {
      if (coder.IsZero(source[at(p)])) target[at(out++)] = source[at(p)];
    }
  }
  if (other_nans) {
    size_t out = nans_start;
    for (size_t p = 0; p < n; ++p) {
      if (coder.IsNan(source[at(p)])) target[at(out++)] = source[at(p)];
    }
  }
  return true;
}

// A key with its position below it in one unsigned word: (key, position)
// order is the stable order. Keys of up to 2 bytes share 32 bits with
// positions when the slice is short enough, others take 64 bits (8-byte
// keys: 128).
template <typename U, typename P>
struct PackedKey {
  using Type = P;
  static constexpr int kShift = static_cast<int>(sizeof(P) - sizeof(U)) * 8;
  static constexpr size_t kMaxLength = size_t{1} << std::min(kShift, 32);
  static P Pack(U key, uint32_t position) { return static_cast<P>((P{key} << kShift) | position); }
  static uint32_t Position(P packed) {
    return static_cast<uint32_t>(packed & static_cast<P>((P{1} << std::min(kShift, 32)) - 1));
  }
  static U Key(P packed) { return static_cast<U>(packed >> kShift); }
};
template <>
struct PackedKey<uint64_t, WideKey> {
  using Type = WideKey;
  static WideKey Pack(uint64_t key, uint32_t position) { return WideKey{position, key}; }
  static uint32_t Position(const WideKey& packed) { return static_cast<uint32_t>(packed.lo); }
  static uint64_t Key(const WideKey& packed) { return packed.hi; }
};

// Whether a slice's sort words are 4 bytes, the radix sort's: 4-byte keys
// alone, or 1- and 2-byte keys with positions that fit beside them in 32
// bits (KeySortSlicesInOrder's choice).
bool SortsFourByteWords(int key_bytes, bool alone, int64_t length) {
  const auto n = static_cast<size_t>(length);
  if (alone) return key_bytes == 4;
  if (key_bytes == 1) return n <= PackedKey<uint8_t, uint32_t>::kMaxLength;
  if (key_bytes == 2) return n <= PackedKey<uint16_t, uint32_t>::kMaxLength;
  return false;
}

// packed[p] = (the key of source[p * inner], p) for p in [begin, end); the
// flags as in EncodeLoneKeys.
template <typename Packing, typename U, SortKeyPlan::Order kOrder>
[[gnu::always_inline]] inline TiedOthers PackKeysBody(const OrderCoder<U, kOrder> coder, const U* source,
                                                      int64_t inner,
                                                      typename Packing::Type* __restrict packed, size_t begin,
                                                      size_t end) {
  TiedOthersTracker<U, kOrder> tied(coder);
  auto pack = [&](size_t p, U bits) {
    packed[p] = Packing::Pack(coder.Encode(bits), static_cast<uint32_t>(p));
    tied.Note(coder, bits);
  };
  ForEachSliceBits(source, inner, begin, end, pack);
  return tied.Found();
}

// The passes above built for AVX-512 as well as for the baseline (x86-64's
// SSE2, 4 lanes of 4 bytes), chosen when the CPU has it: a row of 1024 f32
// keys spent about a quarter of its time encoding and decoding with SSE2.
#if defined(__x86_64__)
#define KILN_SORT_PASS_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))
bool SortPassesUseAvx512() {
  static const bool available = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                                __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  return available;
}

template <typename U, typename W, SortKeyPlan::Order kOrder>
KILN_SORT_PASS_AVX512 TiedOthers EncodeLoneKeysAvx512(const OrderCoder<U, kOrder> coder, const U* source,
                                                      int64_t inner, W* __restrict keys, size_t begin,
                                                      size_t end) {
  return EncodeLoneKeysBody(coder, source, inner, keys, begin, end);
}
template <typename U, typename W, SortKeyPlan::Order kOrder>
KILN_SORT_PASS_AVX512 void DecodeLoneKeysAvx512(const OrderCoder<U, kOrder> coder, const W* keys, U* target,
                                                int64_t inner, size_t begin, size_t end) {
  DecodeLoneKeysBody(coder, keys, target, inner, begin, end);
}
template <typename Packing, typename U, SortKeyPlan::Order kOrder>
KILN_SORT_PASS_AVX512 TiedOthers PackKeysAvx512(const OrderCoder<U, kOrder> coder, const U* source,
                                                int64_t inner, typename Packing::Type* __restrict packed,
                                                size_t begin, size_t end) {
  return PackKeysBody<Packing>(coder, source, inner, packed, begin, end);
}
#endif

template <typename U, typename W, SortKeyPlan::Order kOrder>
TiedOthers EncodeLoneKeys(const OrderCoder<U, kOrder> coder, const U* source, int64_t inner, W* keys,
                          size_t begin, size_t end) {
#if defined(__x86_64__)
  if (SortPassesUseAvx512()) return EncodeLoneKeysAvx512(coder, source, inner, keys, begin, end);
#endif
  return EncodeLoneKeysBody(coder, source, inner, keys, begin, end);
}
template <typename U, typename W, SortKeyPlan::Order kOrder>
void DecodeLoneKeys(const OrderCoder<U, kOrder> coder, const W* keys, U* target, int64_t inner, size_t begin,
                    size_t end) {
#if defined(__x86_64__)
  if (SortPassesUseAvx512()) return DecodeLoneKeysAvx512(coder, keys, target, inner, begin, end);
#endif
  DecodeLoneKeysBody(coder, keys, target, inner, begin, end);
}
template <typename Packing, typename U, SortKeyPlan::Order kOrder>
TiedOthers PackKeys(const OrderCoder<U, kOrder> coder, const U* source, int64_t inner,
                    typename Packing::Type* packed, size_t begin, size_t end) {
#if defined(__x86_64__)
  if (SortPassesUseAvx512()) return PackKeysAvx512<Packing>(coder, source, inner, packed, begin, end);
#endif
  return PackKeysBody<Packing>(coder, source, inner, packed, begin, end);
}

// Whether a 4- or 8-byte integer operand's slice holds its positions 0, 1,
// ... n - 1 (the iota an argsort sorts beside its keys): its sorted slice
// is then the sorted positions themselves.
template <typename T>
bool SliceIsItsPositions(const T* slice, int64_t inner, size_t n, const IntraOpThreadPool* pool) {
  std::atomic<bool> differs{false};
  OverSlice(n, pool, [&](size_t begin, size_t end) {
    T mismatch = 0;
    for (size_t p = begin; p < end; ++p)
      mismatch |= static_cast<T>(slice[static_cast<int64_t>(p) * inner] ^ static_cast<T>(p));
    if (mismatch != 0) differs = true;
  });
  return !differs.load();
}

// Sorts one slice by (key, position) words and gathers every operand by the
// positions. False, with nothing written, for a NaN under the partial order.
template <typename Packing, typename U, SortKeyPlan::Order kOrder>
bool SortPackedSlice(void* const* slots, const KeySortJob& job, const OrderCoder<U, kOrder>& coder,
                     const U* source, int64_t first, const IntraOpThreadPool* pool) {
  using Packed = typename Packing::Type;
  const auto n = static_cast<size_t>(job.length);
  if (AnyNan(coder, source, job.inner, n, pool)) return false;
  // Short slices reuse a thread's buffer; a long slice's is freed after the
  // sort, so no thread keeps it.
  thread_local std::vector<Packed> cached;
  std::vector<Packed> owned;
  std::vector<Packed>& memory = n <= kCachedSlice ? cached : owned;
  if (memory.size() < n) memory.resize(n);
  Packed* packed = memory.data();
  std::atomic<bool> other_zeros{false}, other_nans{false};
  OverSlice(n, pool, [&](size_t begin, size_t end) {
    const TiedOthers others = PackKeys<Packing>(coder, source, job.inner, packed, begin, end);
    if (others.zeros) other_zeros = true;
    if (others.nans) other_nans = true;
  });
  // Positions below the keys are in order: only the keys' bits need sorting
  // where the sort is stable (the radix sort's).
  SortKeys(packed, n, static_cast<int>(sizeof(U)) * 8, job.radix_scratch, pool);
  // Each operand's sorted slice: the key operand decoded from the sorted
  // words (unless tied keys hold other bits), an operand holding its
  // positions (an iota no kernel computed, or a slice found to hold them)
  // written from them, others gathered by position (on a long slice, reads
  // all over the operand).
  for (size_t k = 0; k < job.inputs->size(); ++k) {
    const void* input = slots[(*job.inputs)[k]];
    void* output = slots[(*job.outputs)[k]];
    const int bytes = (*job.element_bytes)[k];
    const bool is_key = static_cast<int>(k) == job.plan->operand;
    const bool generated = (*job.generated_positions)[k];
    const auto at = [&](size_t p) { return first + static_cast<int64_t>(p) * job.inner; };
    if (is_key && !other_zeros && !other_nans) {
      U* target = static_cast<U*>(output);
      OverSlice(n, pool, [&](size_t begin, size_t end) {
        for (size_t p = begin; p < end; ++p) target[at(p)] = coder.Decode(Packing::Key(packed[p]));
      });
    } else if (bytes == 4 && !is_key &&
               (generated ||
                SliceIsItsPositions(static_cast<const uint32_t*>(input) + first, job.inner, n, pool))) {
      uint32_t* target = static_cast<uint32_t*>(output);
      OverSlice(n, pool, [&](size_t begin, size_t end) {
        for (size_t p = begin; p < end; ++p) target[at(p)] = Packing::Position(packed[p]);
      });
    } else if (bytes == 8 && !is_key &&
               (generated ||
                SliceIsItsPositions(static_cast<const uint64_t*>(input) + first, job.inner, n, pool))) {
      uint64_t* target = static_cast<uint64_t*>(output);
      OverSlice(n, pool, [&](size_t begin, size_t end) {
        for (size_t p = begin; p < end; ++p) target[at(p)] = Packing::Position(packed[p]);
      });
    } else {
      OverSlice(n, pool, [&](size_t begin, size_t end) {
        GatherOperand(
            static_cast<const uint8_t*>(input), static_cast<uint8_t*>(output), static_cast<size_t>(bytes),
            first, job.inner, [packed](size_t p) { return Packing::Position(packed[p]); }, begin, end);
      });
    }
  }
  return true;
}

// Sorts slices [begin, end) of keys under one order with the vectorised
// quicksort: a single operand by its keys alone, otherwise (key, position)
// words whose positions gather every operand. `pool` (null inside a
// parallel loop over slices) spreads a long slice's work over its threads.
template <typename U, SortKeyPlan::Order kOrder, typename ByComparator>
void KeySortSlicesInOrder(void* const* slots, const KeySortJob& job, int64_t begin, int64_t end,
                          const ByComparator& by_comparator, const IntraOpThreadPool* pool) {
  const SortKeyPlan& plan = *job.plan;
  const OrderCoder<U, kOrder> coder(plan);
  const auto n = static_cast<size_t>(job.length);
  const auto* keys = static_cast<const U*>(slots[(*job.inputs)[static_cast<size_t>(plan.operand)]]);
  for (int64_t slice = begin; slice < end; ++slice) {
    const int64_t first = (slice / job.inner) * job.length * job.inner + slice % job.inner;
    const U* source = keys + first;
    bool sorted = false;
    if (job.inputs->size() == 1) {
      sorted = SortLoneSlice<U, kOrder>(coder, source, static_cast<U*>(slots[(*job.outputs)[0]]) + first,
                                        job.inner, n, job.radix_scratch, pool);
    } else if constexpr (sizeof(U) == 8) {
      sorted = SortPackedSlice<PackedKey<U, WideKey>>(slots, job, coder, source, first, pool);
    } else if constexpr (sizeof(U) <= 2) {
      sorted = n <= PackedKey<U, uint32_t>::kMaxLength
                   ? SortPackedSlice<PackedKey<U, uint32_t>>(slots, job, coder, source, first, pool)
                   : SortPackedSlice<PackedKey<U, uint64_t>>(slots, job, coder, source, first, pool);
    } else {
      sorted = SortPackedSlice<PackedKey<U, uint64_t>>(slots, job, coder, source, first, pool);
    }
    if (!sorted) by_comparator(slice);
  }
}

// Sorts slices [begin, end) by key; a slice whose keys cannot be encoded
// (NaN under the partial order) goes to `by_comparator`.
template <typename U, typename ByComparator>
void KeySortSlices(void* const* slots, const KeySortJob& job, int64_t begin, int64_t end,
                   const ByComparator& by_comparator, const IntraOpThreadPool* pool) {
  switch (job.plan->order) {
    case SortKeyPlan::Order::kInteger:
      return KeySortSlicesInOrder<U, SortKeyPlan::Order::kInteger>(slots, job, begin, end, by_comparator,
                                                                   pool);
    case SortKeyPlan::Order::kFloat:
      return KeySortSlicesInOrder<U, SortKeyPlan::Order::kFloat>(slots, job, begin, end, by_comparator, pool);
    case SortKeyPlan::Order::kTotalOrder:
      return KeySortSlicesInOrder<U, SortKeyPlan::Order::kTotalOrder>(slots, job, begin, end, by_comparator,
                                                                      pool);
    case SortKeyPlan::Order::kCanonicalTotalOrder:
      return KeySortSlicesInOrder<U, SortKeyPlan::Order::kCanonicalTotalOrder>(slots, job, begin, end,
                                                                               by_comparator, pool);
  }
}

// Sorts `order` stably by `less` (bottom-up merge sort through `scratch`).
// It never reads outside the slice, even for a comparator that is not a
// strict weak order: such a comparator gives some order, never a crash.
template <typename Less>
void MergeSort(std::vector<int64_t>& order, std::vector<int64_t>& scratch, const Less& less) {
  const size_t n = order.size();
  scratch.resize(n);
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t left = 0; left < n; left += 2 * width) {
      const size_t middle = std::min(left + width, n);
      const size_t right = std::min(left + 2 * width, n);
      size_t i = left, j = middle, k = left;
      while (i < middle && j < right) scratch[k++] = less(order[j], order[i]) ? order[j++] : order[i++];
      while (i < middle) scratch[k++] = order[i++];
      while (j < right) scratch[k++] = order[j++];
    }
    order.swap(scratch);
  }
}

}  // namespace

bool ComputesPositionsAlong(const Computation& kernel, const Shape& shape, int64_t dimension) {
  const Instruction* at = kernel.root();
  const ElementType type = shape.IsArray() ? shape.element_type() : ElementType::kPred;
  const bool integer_positions = type == ElementType::kS32 || type == ElementType::kU32 ||
                                 type == ElementType::kS64 || type == ElementType::kU64;
  if (at == nullptr || !kernel.parameters().empty() || !integer_positions || !at->shape.IsArray() ||
      at->shape.element_type() != type || at->shape.dimensions() != shape.dimensions() || dimension < 0 ||
      dimension >= shape.rank()) {
    return false;
  }
  const int64_t length = shape.dimensions(dimension);
  // Down through broadcasts, following the dimension the positions run along.
  while (at->opcode == Opcode::kBroadcast && at->operands.size() == 1 && at->operand(0)->shape.IsArray() &&
         at->operand(0)->shape.element_type() == type) {
    const std::vector<int64_t>& placed = at->attrs.dimensions;
    const auto found = std::find(placed.begin(), placed.end(), dimension);
    if (found == placed.end()) return false;  // broadcast along it: every position holds one value
    dimension = found - placed.begin();
    at = at->operand(0);
    if (dimension >= at->shape.rank() || at->shape.dimensions(dimension) != length) return false;
  }
  return at->opcode == Opcode::kIota && at->shape.element_type() == type &&
         at->attrs.iota_dimension == dimension;
}

SortThunk::SortThunk(std::vector<int> inputs, std::vector<int> outputs, SortGeometry geometry,
                     std::unique_ptr<LibraryThunk> fallback)
    : Thunk(std::move(inputs), std::move(outputs)),
      geometry_(std::move(geometry)),
      fallback_(std::move(fallback)) {
  geometry_.generated_positions.resize(inputs_.size(), false);
  const std::vector<int64_t>& dims = geometry_.dimensions;
  const auto rank = static_cast<int64_t>(dims.size());
  if (rank > 0) length_ = dims[static_cast<size_t>(geometry_.sort_dimension)];
  int64_t outer = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < geometry_.sort_dimension) outer *= dims[static_cast<size_t>(d)];
    if (d > geometry_.sort_dimension) inner_ *= dims[static_cast<size_t>(d)];
  }
  slices_ = outer * inner_;
}

int64_t SortThunk::RadixScratchBytes() const {
  if (!key_plan_.has_value() || length_ < static_cast<int64_t>(kRadixSortMinKeys)) return 0;
  if (!SortsFourByteWords(ByteWidth(key_plan_->type), inputs_.size() == 1, length_)) return 0;
  return length_ * static_cast<int64_t>(sizeof(uint32_t));
}

void SortThunk::WritePositions(void* const* slots, int64_t begin, int64_t end) const {
  for (size_t k = 0; k < inputs_.size(); ++k) {
    if (!geometry_.generated_positions[k]) continue;
    const auto write = [&](auto* positions) {
      using T = std::remove_pointer_t<decltype(positions)>;
      for (int64_t slice = begin; slice < end; ++slice) {
        const int64_t first = (slice / inner_) * length_ * inner_ + slice % inner_;
        for (int64_t p = 0; p < length_; ++p) positions[first + p * inner_] = static_cast<T>(p);
      }
    };
    if (geometry_.element_bytes[k] == 4) write(static_cast<uint32_t*>(slots[inputs_[k]]));
    if (geometry_.element_bytes[k] == 8) write(static_cast<uint64_t*>(slots[inputs_[k]]));
  }
}

void SortThunk::SortSlices(void* const* slots, int64_t begin, int64_t end) const {
  const size_t operands = inputs_.size();
  WritePositions(slots, begin, end);
  // Comparator buffers: (lhs, rhs) element pointers per operand, then the result.
  std::vector<void*> arguments(2 * operands + 1);
  bool less_result = false;
  arguments.back() = &less_result;
  auto less = [&](int64_t a, int64_t b) {
    for (size_t k = 0; k < operands; ++k) {
      auto* base = static_cast<uint8_t*>(slots[inputs_[k]]);
      const int bytes = geometry_.element_bytes[k];
      arguments[2 * k] = base + a * bytes;
      arguments[2 * k + 1] = base + b * bytes;
    }
    comparator_(arguments.data(), 0, 1);
    return less_result;
  };
  std::vector<int64_t> order(static_cast<size_t>(length_)), scratch;
  for (int64_t slice = begin; slice < end; ++slice) {
    const int64_t first = (slice / inner_) * length_ * inner_ + slice % inner_;
    for (int64_t p = 0; p < length_; ++p) order[static_cast<size_t>(p)] = first + p * inner_;
    MergeSort(order, scratch, less);
    for (size_t k = 0; k < operands; ++k) {
      const auto* source = static_cast<const uint8_t*>(slots[inputs_[k]]);
      auto* target = static_cast<uint8_t*>(slots[outputs_[k]]);
      const auto bytes = static_cast<size_t>(geometry_.element_bytes[k]);
      for (int64_t p = 0; p < length_; ++p) {
        std::memcpy(target + static_cast<size_t>(first + p * inner_) * bytes,
                    source + static_cast<size_t>(order[static_cast<size_t>(p)]) * bytes, bytes);
      }
    }
  }
}

void SortThunk::SortSlicesByKey(void* const* slots, int64_t begin, int64_t end, const IntraOpThreadPool* pool,
                                uint32_t* radix_scratch) const {
  const KeySortJob job{.plan = &*key_plan_,
                       .inputs = &inputs_,
                       .outputs = &outputs_,
                       .element_bytes = &geometry_.element_bytes,
                       .generated_positions = &geometry_.generated_positions,
                       .length = length_,
                       .inner = inner_,
                       .radix_scratch = radix_scratch};
  auto by_comparator = [&](int64_t slice) { SortSlices(slots, slice, slice + 1); };
  switch (ByteWidth(key_plan_->type)) {
    case 1: return KeySortSlices<uint8_t>(slots, job, begin, end, by_comparator, pool);
    case 2: return KeySortSlices<uint16_t>(slots, job, begin, end, by_comparator, pool);
    case 4: return KeySortSlices<uint32_t>(slots, job, begin, end, by_comparator, pool);
    default: return KeySortSlices<uint64_t>(slots, job, begin, end, by_comparator, pool);
  }
}

Status SortThunk::Run(ExecutionContext& context) const {
  const bool by_key = KeyPathReady();
  void* const* slots = context.slots;
  if (!by_key && comparator_ == nullptr) {
    WritePositions(slots, 0, slices_);
    return fallback_->Run(context);
  }
  if (length_ == 0 || slices_ == 0) return OkStatus();
  auto sort = [&](int64_t begin, int64_t end) {
    if (by_key) {
      SortSlicesByKey(slots, begin, end, nullptr, nullptr);
    } else {
      SortSlices(slots, begin, end);
    }
  };
  const int64_t grain = std::max<int64_t>(1, kSortElementsPerTask / std::max<int64_t>(1, length_));
  if (slices_ <= grain || context.pool == nullptr || context.pool->num_threads() == 1) {
    // Few slices: a large one spreads its own work over the threads.
    if (by_key) {
      SortSlicesByKey(slots, 0, slices_, context.pool,
                      radix_scratch_ >= 0 ? static_cast<uint32_t*>(slots[radix_scratch_]) : nullptr);
    } else {
      SortSlices(slots, 0, slices_);
    }
  } else {
    context.pool->ParallelFor(slices_, grain, sort);
  }
  return OkStatus();
}

}  // namespace kiln::cpu
