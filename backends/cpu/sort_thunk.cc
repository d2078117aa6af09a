#include "backends/cpu/sort_thunk.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "backends/cpu/thread_pool.h"
#include "backends/cpu/vector_sort.h"

namespace kiln::cpu {
namespace {

// Elements a parallel task should sort at least, so scheduling stays cheap.
constexpr int64_t kSortElementsPerTask = 16 * 1024;

// --- Matching single-key comparators -------------------------------------------

// One side of the comparator's compare: the parameter it reads and whether
// jnp's canonicalisation (NaN -> a NaN constant, +-0 -> a zero constant)
// came first.
struct KeyOperand {
  int64_t parameter = -1;
  bool canonical = false;
  uint64_t nan_bits = 0;
  uint64_t zero_bits = 0;
};

// The sign bit and the exponent mask of a float type's bit pattern.
struct FloatLayout {
  uint64_t sign = 0;
  uint64_t exponent = 0;
};

std::optional<FloatLayout> LayoutOf(ElementType type) {
  switch (type) {
    case ElementType::kF16: return FloatLayout{0x8000, 0x7C00};
    case ElementType::kBF16: return FloatLayout{0x8000, 0x7F80};
    case ElementType::kF32: return FloatLayout{0x80000000u, 0x7F800000u};
    case ElementType::kF64: return FloatLayout{0x8000000000000000ull, 0x7FF0000000000000ull};
    default: return std::nullopt;
  }
}

// The bits of a scalar float constant.
std::optional<uint64_t> ConstantBits(const Instruction* instruction) {
  if (instruction->opcode != Opcode::kConstant || !instruction->literal.has_value() ||
      !instruction->shape.IsArray() || instruction->shape.rank() != 0 ||
      !LayoutOf(instruction->shape.element_type()).has_value()) {
    return std::nullopt;
  }
  const auto bytes = instruction->literal->data<uint8_t>();
  const auto width = static_cast<size_t>(ByteWidth(instruction->shape.element_type()));
  if (bytes.size() != width) return std::nullopt;
  uint64_t bits = 0;
  std::memcpy(&bits, bytes.data(), width);
  return bits;
}

bool PartialCompare(const Instruction* instruction, ComparisonDirection direction) {
  return instruction->opcode == Opcode::kCompare && instruction->operands.size() == 2 &&
         instruction->attrs.comparison_direction == direction &&
         (instruction->attrs.comparison_type == ComparisonType::kDefault ||
          instruction->attrs.comparison_type == ComparisonType::kFloat);
}

// `instruction` as a parameter, or as
//   select(compare(p, p) NE, NaN, select(compare(p, 0) EQ, 0, p))
// (what jnp.sort and jnp.argsort put before a TOTALORDER compare).
std::optional<KeyOperand> ResolveKeyOperand(const Instruction* instruction) {
  if (instruction->opcode == Opcode::kParameter) return KeyOperand{instruction->attrs.parameter_number};
  if (instruction->opcode != Opcode::kSelect || instruction->operands.size() != 3) return std::nullopt;
  const Instruction* is_nan = instruction->operand(0);
  const Instruction* inner = instruction->operand(2);
  if (!PartialCompare(is_nan, ComparisonDirection::kNe) || is_nan->operand(0) != is_nan->operand(1)) {
    return std::nullopt;
  }
  const Instruction* parameter = is_nan->operand(0);
  if (parameter->opcode != Opcode::kParameter) return std::nullopt;
  const std::optional<FloatLayout> layout = LayoutOf(parameter->shape.element_type());
  const std::optional<uint64_t> nan = ConstantBits(instruction->operand(1));
  if (!layout.has_value() || !nan.has_value() || (*nan & ~layout->sign) <= layout->exponent)
    return std::nullopt;
  if (inner->opcode != Opcode::kSelect || inner->operands.size() != 3 || inner->operand(2) != parameter) {
    return std::nullopt;
  }
  const Instruction* is_zero = inner->operand(0);
  if (!PartialCompare(is_zero, ComparisonDirection::kEq)) return std::nullopt;
  const Instruction* zero_operand =
      is_zero->operand(0) == parameter ? is_zero->operand(1) : is_zero->operand(0);
  if (is_zero->operand(0) != parameter && is_zero->operand(1) != parameter) return std::nullopt;
  const std::optional<uint64_t> compared_zero = ConstantBits(zero_operand);
  const std::optional<uint64_t> zero = ConstantBits(inner->operand(1));
  if (!compared_zero.has_value() || !zero.has_value() || (*compared_zero & ~layout->sign) != 0 ||
      (*zero & ~layout->sign) != 0) {
    return std::nullopt;
  }
  for (const Instruction* constant :
       std::initializer_list<const Instruction*>{instruction->operand(1), inner->operand(1), zero_operand}) {
    if (constant->shape.element_type() != parameter->shape.element_type()) return std::nullopt;
  }
  return KeyOperand{parameter->attrs.parameter_number, true, *nan, *zero};
}

// --- Sorting by key ------------------------------------------------------------

template <typename U>
struct KeyEntry {
  U key;
  uint32_t index;
};

// Maps an element's bits to an unsigned key in the comparator's order.
template <typename U>
struct KeyCoder {
  SortKeyPlan::Order order;
  bool is_signed;
  bool descending;
  U sign;
  U exponent;
  U nan_bits;
  U zero_bits;

  static U Total(U bits, U sign) {
    return (bits & sign) ? static_cast<U>(~bits) : static_cast<U>(bits | sign);
  }

  // False for a NaN under the partial order (no key orders it).
  bool Encode(U bits, U& key) const {
    const auto magnitude = static_cast<U>(bits & static_cast<U>(~sign));
    switch (order) {
      case SortKeyPlan::Order::kInteger: key = is_signed ? static_cast<U>(bits ^ sign) : bits; break;
      case SortKeyPlan::Order::kFloat:
        if (magnitude > exponent) return false;
        key = Total(magnitude == 0 ? U{0} : bits, sign);
        break;
      case SortKeyPlan::Order::kTotalOrder: key = Total(bits, sign); break;
      case SortKeyPlan::Order::kCanonicalTotalOrder:
        key = Total(magnitude > exponent ? nan_bits : magnitude == 0 ? zero_bits : bits, sign);
        break;
    }
    if (descending) key = static_cast<U>(~key);
    return true;
  }
};

template <typename U>
KeyCoder<U> CoderOf(const SortKeyPlan& plan) {
  KeyCoder<U> coder{plan.order,
                    IsSignedIntegral(plan.type),
                    plan.descending,
                    static_cast<U>(U{1} << (sizeof(U) * 8 - 1)),
                    0,
                    static_cast<U>(plan.nan_bits),
                    static_cast<U>(plan.zero_bits)};
  if (const std::optional<FloatLayout> layout = LayoutOf(plan.type))
    coder.exponent = static_cast<U>(layout->exponent);
  return coder;
}

// Sorts `n` entries by (key, index), through `scratch`; returns whichever of
// the two buffers holds the result. Entries arrive in index order, so the
// stable LSD radix sort by key alone orders equal keys by index.
template <typename U>
KeyEntry<U>* SortEntries(KeyEntry<U>* entries, KeyEntry<U>* scratch, size_t n,
                         int key_bits = static_cast<int>(sizeof(U)) * 8) {
  if (n < 128) {
    std::sort(entries, entries + n, [](const KeyEntry<U>& a, const KeyEntry<U>& b) {
      return a.key < b.key || (a.key == b.key && a.index < b.index);
    });
    return entries;
  }
  // 8-bit digits: 256 scatter targets stay in the store buffers and TLB
  // (11-bit digits were slower here).
  const int digit = 8;
  const int passes = (key_bits + digit - 1) / digit;
  const size_t buckets = size_t{1} << digit;
  const U mask = static_cast<U>(buckets - 1);
  thread_local std::vector<uint32_t> counts;
  counts.assign(static_cast<size_t>(passes) * buckets, 0);
  for (size_t i = 0; i < n; ++i) {
    const U key = entries[i].key;
    for (int pass = 0; pass < passes; ++pass) {
      ++counts[static_cast<size_t>(pass) * buckets + static_cast<size_t>((key >> (pass * digit)) & mask)];
    }
  }
  KeyEntry<U>* from = entries;
  KeyEntry<U>* to = scratch;
  for (int pass = 0; pass < passes; ++pass) {
    uint32_t* count = counts.data() + static_cast<size_t>(pass) * buckets;
    // A digit every key shares moves nothing.
    if (count[static_cast<size_t>((from[0].key >> (pass * digit)) & mask)] == n) continue;
    uint32_t offset = 0;
    for (size_t b = 0; b < buckets; ++b) {
      const uint32_t c = count[b];
      count[b] = offset;
      offset += c;
    }
    const int shift = pass * digit;
    for (size_t i = 0; i < n; ++i) {
      const KeyEntry<U> entry = from[i];
      to[count[static_cast<size_t>((entry.key >> shift) & mask)]++] = entry;
    }
    std::swap(from, to);
  }
  return from;
}

// Sorts `n` entries of a large slice into `entries`: one stable pass by the
// top 11 bits into `scratch`, then each bucket (on most data small enough
// for the caches) by the remaining bits, the buckets spread over `pool`.
template <typename U>
void SortLargeEntries(KeyEntry<U>* entries, KeyEntry<U>* scratch, size_t n, const IntraOpThreadPool* pool) {
  constexpr int kKeyBits = static_cast<int>(sizeof(U)) * 8;
  constexpr int kTopBits = 11;
  static_assert(kKeyBits > kTopBits);
  constexpr int kShift = kKeyBits - kTopBits;
  constexpr size_t kBuckets = size_t{1} << kTopBits;
  std::vector<uint32_t> start(kBuckets + 1, 0);
  for (size_t i = 0; i < n; ++i) ++start[static_cast<size_t>(entries[i].key >> kShift) + 1];
  for (size_t b = 0; b < kBuckets; ++b) start[b + 1] += start[b];
  std::vector<uint32_t> next(start.begin(), start.end() - 1);
  for (size_t i = 0; i < n; ++i) scratch[next[static_cast<size_t>(entries[i].key >> kShift)]++] = entries[i];
  auto sort_buckets = [&](int64_t begin, int64_t end) {
    for (auto b = static_cast<size_t>(begin); b < static_cast<size_t>(end); ++b) {
      const size_t length = start[b + 1] - start[b];
      if (length == 0) continue;
      const KeyEntry<U>* sorted = SortEntries(scratch + start[b], entries + start[b], length, kShift);
      if (sorted != entries + start[b]) std::memcpy(entries + start[b], sorted, length * sizeof(KeyEntry<U>));
    }
  };
  if (pool != nullptr && pool->num_threads() > 1) {
    pool->ParallelFor(static_cast<int64_t>(kBuckets), 16, sort_buckets);
  } else {
    sort_buckets(0, static_cast<int64_t>(kBuckets));
  }
}

// Writes target[first + p * inner] = source[first + index_of(p) * inner]
// for p in [p_begin, p_end).
template <size_t kBytes, typename IndexOf>
void Gather(const uint8_t* source, uint8_t* target, int64_t first, int64_t inner, const IndexOf& index_of,
            size_t p_begin, size_t p_end) {
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
    case 1: return Gather<1>(source, target, first, inner, index_of, p_begin, p_end);
    case 2: return Gather<2>(source, target, first, inner, index_of, p_begin, p_end);
    case 4: return Gather<4>(source, target, first, inner, index_of, p_begin, p_end);
    case 8: return Gather<8>(source, target, first, inner, index_of, p_begin, p_end);
    case 16: return Gather<16>(source, target, first, inner, index_of, p_begin, p_end);
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
  int64_t length;
  int64_t inner;
};

// Slices at least this long take SortLargeEntries.
constexpr size_t kLargeSlice = 64 * 1024;
// Slices up to this long are sorted in buffers each thread keeps.
constexpr size_t kCachedSlice = 64 * 1024;

// --- Sorting 4- and 8-byte keys with the vectorised quicksort ----------------

// KeyCoder's Encode and Decode for one order without a branch, so the loops
// over a slice's elements vectorise (with a switch per element, encoding and
// decoding 1M f32 keys took as long as sorting them).
template <typename U, SortKeyPlan::Order kOrder>
struct OrderCoder {
  static constexpr int kTopBit = static_cast<int>(sizeof(U)) * 8 - 1;
  U sign;
  U exponent;
  U nan_bits;
  U zero_bits;
  U integer_flip;  // the sign bit for signed integers, else 0
  U direction;     // all ones for a descending sort, else 0

  explicit OrderCoder(const KeyCoder<U>& coder)
      : sign(coder.sign),
        exponent(coder.exponent),
        nan_bits(coder.nan_bits),
        zero_bits(coder.zero_bits),
        integer_flip(coder.is_signed ? coder.sign : U{0}),
        direction(coder.descending ? static_cast<U>(~U{0}) : U{0}) {}

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
    return kOrder != SortKeyPlan::Order::kInteger && static_cast<U>(bits & static_cast<U>(~sign)) > exponent;
  }
  bool IsZero(U bits) const {
    return kOrder != SortKeyPlan::Order::kInteger && static_cast<U>(bits & static_cast<U>(~sign)) == 0;
  }
  // Equal keys stand for different bits: +0 and -0 under the float orders,
  // every NaN under the canonical total order.
  static constexpr bool kZerosTie =
      kOrder == SortKeyPlan::Order::kFloat || kOrder == SortKeyPlan::Order::kCanonicalTotalOrder;
  static constexpr bool kNansTie = kOrder == SortKeyPlan::Order::kCanonicalTotalOrder;
  U ZeroRepresentative() const { return kOrder == SortKeyPlan::Order::kFloat ? U{0} : zero_bits; }
};

// Sorts one slice of a single operand: its keys alone are sorted and decoded
// back into the output (a contiguous slice's keys are encoded into the output
// itself). Where a class of tied keys (OrderCoder::kZerosTie, kNansTie) holds
// bits other than its representative, its run of the result is rewritten
// with the slice's members in their original order, as a stable sort leaves
// them. False, with nothing written, for a NaN under the partial order.
template <typename U, SortKeyPlan::Order kOrder>
bool VectorSortSingleOperand(const OrderCoder<U, kOrder>& coder, const U* source, U* target, int64_t inner,
                             size_t n) {
  const auto at = [inner](size_t p) { return static_cast<size_t>(static_cast<int64_t>(p) * inner); };
  if constexpr (kOrder == SortKeyPlan::Order::kFloat) {
    size_t nans = 0;
    for (size_t p = 0; p < n; ++p) nans += coder.IsNan(source[at(p)]) ? 1 : 0;
    if (nans > 0) return false;
  }
  std::unique_ptr<U[]> strided_keys;
  U* keys = target;
  if (inner != 1) {
    strided_keys.reset(new U[n]);
    keys = strided_keys.get();
  }
  size_t other_zeros = 0, other_nans = 0;  // tied members that are not the representative
  const U zero_representative = coder.ZeroRepresentative();
  for (size_t p = 0; p < n; ++p) {
    const U bits = source[at(p)];
    keys[p] = coder.Encode(bits);
    if constexpr (OrderCoder<U, kOrder>::kZerosTie)
      other_zeros += (coder.IsZero(bits) && bits != zero_representative) ? 1 : 0;
    if constexpr (OrderCoder<U, kOrder>::kNansTie)
      other_nans += (coder.IsNan(bits) && bits != coder.nan_bits) ? 1 : 0;
  }
  VectorSortAscending(keys, n);
  // Where each run to rewrite starts, found before decoding overwrites keys.
  const auto run_start = [&](U representative) {
    return static_cast<size_t>(std::lower_bound(keys, keys + n, coder.Encode(representative)) - keys);
  };
  const size_t zeros_start = other_zeros > 0 ? run_start(zero_representative) : 0;
  const size_t nans_start = other_nans > 0 ? run_start(coder.nan_bits) : 0;
  for (size_t p = 0; p < n; ++p) target[at(p)] = coder.Decode(keys[p]);
  if (other_zeros > 0) {
    size_t out = zeros_start;
    for (size_t p = 0; p < n; ++p) {
      if (coder.IsZero(source[at(p)])) target[at(out++)] = source[at(p)];
    }
  }
  if (other_nans > 0) {
    size_t out = nans_start;
    for (size_t p = 0; p < n; ++p) {
      if (coder.IsNan(source[at(p)])) target[at(out++)] = source[at(p)];
    }
  }
  return true;
}

// A key with its position below it: (key, position) order is the stable order.
template <typename U>
struct PackedKeyOf;
template <>
struct PackedKeyOf<uint32_t> {
  using Type = uint64_t;
  static uint64_t Pack(uint32_t key, uint32_t position) { return (uint64_t{key} << 32) | position; }
  static uint32_t Position(uint64_t packed) { return static_cast<uint32_t>(packed); }
};
template <>
struct PackedKeyOf<uint64_t> {
  using Type = WideKey;
  static WideKey Pack(uint64_t key, uint32_t position) { return WideKey{position, key}; }
  static uint32_t Position(const WideKey& packed) { return static_cast<uint32_t>(packed.lo); }
};

// Sorts slices [begin, end) of 4- or 8-byte keys under one order with the
// vectorised quicksort: a single operand by its keys alone, otherwise
// (key, position) pairs whose positions gather every operand (over `pool`'s
// threads for a long slice).
template <typename U, SortKeyPlan::Order kOrder, typename ByComparator>
void VectorKeySortSlicesInOrder(void* const* slots, const KeySortJob& job, int64_t begin, int64_t end,
                                const ByComparator& by_comparator, const IntraOpThreadPool* pool) {
  const SortKeyPlan& plan = *job.plan;
  const OrderCoder<U, kOrder> coder(CoderOf<U>(plan));
  const auto n = static_cast<size_t>(job.length);
  const auto* keys = static_cast<const U*>(slots[(*job.inputs)[static_cast<size_t>(plan.operand)]]);
  using Packing = PackedKeyOf<U>;
  using Packed = typename Packing::Type;
  // Short slices reuse a thread's buffer; a long slice's is freed after the
  // sort, so no thread keeps it.
  thread_local std::vector<Packed> cached;
  std::vector<Packed> owned;
  for (int64_t slice = begin; slice < end; ++slice) {
    const int64_t first = (slice / job.inner) * job.length * job.inner + slice % job.inner;
    const U* source = keys + first;
    if (job.inputs->size() == 1) {
      if (!VectorSortSingleOperand<U, kOrder>(
              coder, source, static_cast<U*>(slots[(*job.outputs)[0]]) + first, job.inner, n)) {
        by_comparator(slice);
      }
      continue;
    }
    std::vector<Packed>& memory = n <= kCachedSlice ? cached : owned;
    if (memory.size() < n) memory.resize(n);
    Packed* packed = memory.data();
    size_t nans = 0;
    for (size_t p = 0; p < n; ++p) {
      const U bits = source[static_cast<size_t>(static_cast<int64_t>(p) * job.inner)];
      if constexpr (kOrder == SortKeyPlan::Order::kFloat) nans += coder.IsNan(bits) ? 1 : 0;
      packed[p] = Packing::Pack(coder.Encode(bits), static_cast<uint32_t>(p));
    }
    if (nans > 0) {
      by_comparator(slice);
      continue;
    }
    VectorSortAscending(packed, n);
    auto gather = [&](int64_t p_begin, int64_t p_end) {
      for (size_t k = 0; k < job.inputs->size(); ++k) {
        GatherOperand(
            static_cast<const uint8_t*>(slots[(*job.inputs)[k]]),
            static_cast<uint8_t*>(slots[(*job.outputs)[k]]), static_cast<size_t>((*job.element_bytes)[k]),
            first, job.inner, [packed](size_t p) { return Packing::Position(packed[p]); },
            static_cast<size_t>(p_begin), static_cast<size_t>(p_end));
      }
    };
    if (pool != nullptr && pool->num_threads() > 1 && n >= kLargeSlice) {
      pool->ParallelFor(static_cast<int64_t>(n), kSortElementsPerTask, gather);
    } else {
      gather(0, static_cast<int64_t>(n));
    }
  }
}

template <typename U, typename ByComparator>
void VectorKeySortSlices(void* const* slots, const KeySortJob& job, int64_t begin, int64_t end,
                         const ByComparator& by_comparator, const IntraOpThreadPool* pool) {
  switch (job.plan->order) {
    case SortKeyPlan::Order::kInteger:
      return VectorKeySortSlicesInOrder<U, SortKeyPlan::Order::kInteger>(slots, job, begin, end,
                                                                         by_comparator, pool);
    case SortKeyPlan::Order::kFloat:
      return VectorKeySortSlicesInOrder<U, SortKeyPlan::Order::kFloat>(slots, job, begin, end, by_comparator,
                                                                       pool);
    case SortKeyPlan::Order::kTotalOrder:
      return VectorKeySortSlicesInOrder<U, SortKeyPlan::Order::kTotalOrder>(slots, job, begin, end,
                                                                            by_comparator, pool);
    case SortKeyPlan::Order::kCanonicalTotalOrder:
      return VectorKeySortSlicesInOrder<U, SortKeyPlan::Order::kCanonicalTotalOrder>(slots, job, begin, end,
                                                                                     by_comparator, pool);
  }
}

// Sorts slices [begin, end) by key; a slice whose keys cannot be encoded
// (NaN under the partial order) goes to `by_comparator`. `pool` (null inside
// a parallel loop over slices) spreads a large slice's work over threads.
template <typename U, typename ByComparator>
void KeySortSlices(void* const* slots, const KeySortJob& job, int64_t begin, int64_t end,
                   const ByComparator& by_comparator, const IntraOpThreadPool* pool) {
  if constexpr (sizeof(U) >= 4) {
    return VectorKeySortSlices<U>(slots, job, begin, end, by_comparator, pool);
  }
  const SortKeyPlan& plan = *job.plan;
  const KeyCoder<U> coder = CoderOf<U>(plan);
  const auto n = static_cast<size_t>(job.length);
  // Short slices reuse a thread's buffers; a long slice's are freed after the
  // sort, so no thread keeps them.
  thread_local std::vector<KeyEntry<U>> cached;
  std::unique_ptr<KeyEntry<U>[]> owned;
  KeyEntry<U>* entries;
  if (n <= kCachedSlice) {
    if (cached.size() < 2 * n) cached.resize(2 * n);
    entries = cached.data();
  } else {
    owned.reset(new KeyEntry<U>[2 * n]);
    entries = owned.get();
  }
  KeyEntry<U>* scratch = entries + n;
  const auto* keys = static_cast<const uint8_t*>(slots[(*job.inputs)[static_cast<size_t>(plan.operand)]]);
  for (int64_t slice = begin; slice < end; ++slice) {
    const int64_t first = (slice / job.inner) * job.length * job.inner + slice % job.inner;
    bool encoded = true;
    for (size_t p = 0; p < n && encoded; ++p) {
      U bits;
      std::memcpy(&bits, keys + static_cast<size_t>(first + static_cast<int64_t>(p) * job.inner) * sizeof(U),
                  sizeof(U));
      entries[p].index = static_cast<uint32_t>(p);
      encoded = coder.Encode(bits, entries[p].key);
    }
    if (!encoded) {
      by_comparator(slice);
      continue;
    }
    const KeyEntry<U>* sorted = entries;
    if constexpr (sizeof(U) >= 2) {
      if (n >= kLargeSlice) {
        SortLargeEntries(entries, scratch, n, pool);
      } else {
        sorted = SortEntries(entries, scratch, n);
      }
    } else {
      sorted = SortEntries(entries, scratch, n);
    }
    auto gather = [&](int64_t p_begin, int64_t p_end) {
      for (size_t k = 0; k < job.inputs->size(); ++k) {
        GatherOperand(
            static_cast<const uint8_t*>(slots[(*job.inputs)[k]]),
            static_cast<uint8_t*>(slots[(*job.outputs)[k]]), static_cast<size_t>((*job.element_bytes)[k]),
            first, job.inner, [sorted](size_t p) { return sorted[p].index; }, static_cast<size_t>(p_begin),
            static_cast<size_t>(p_end));
      }
    };
    if (pool != nullptr && pool->num_threads() > 1 && n >= kLargeSlice) {
      pool->ParallelFor(static_cast<int64_t>(n), kSortElementsPerTask, gather);
    } else {
      gather(0, static_cast<int64_t>(n));
    }
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

std::optional<SortKeyPlan> MatchSortKeyComparator(const Instruction& sort) {
  if (sort.called.size() != 1 || sort.operands.empty()) return std::nullopt;
  const Computation& comparator = *sort.called[0];
  const Instruction* root = comparator.root();
  if (root == nullptr || root->opcode != Opcode::kCompare || root->operands.size() != 2 ||
      comparator.parameters().size() != 2 * sort.operands.size()) {
    return std::nullopt;
  }
  const ComparisonDirection direction = root->attrs.comparison_direction;
  if (direction != ComparisonDirection::kLt && direction != ComparisonDirection::kGt) return std::nullopt;
  const std::optional<KeyOperand> lhs = ResolveKeyOperand(root->operand(0));
  const std::optional<KeyOperand> rhs = ResolveKeyOperand(root->operand(1));
  if (!lhs.has_value() || !rhs.has_value() || lhs->parameter < 0 || rhs->parameter < 0 ||
      lhs->parameter / 2 != rhs->parameter / 2 || lhs->parameter == rhs->parameter ||
      lhs->canonical != rhs->canonical || lhs->nan_bits != rhs->nan_bits ||
      lhs->zero_bits != rhs->zero_bits) {
    return std::nullopt;
  }
  SortKeyPlan plan;
  plan.operand = static_cast<int>(lhs->parameter / 2);
  if (static_cast<size_t>(plan.operand) >= sort.operands.size()) return std::nullopt;
  const Shape& shape = sort.operand(static_cast<size_t>(plan.operand))->shape;
  plan.type = shape.element_type();
  if (root->operand(0)->shape.element_type() != plan.type ||
      comparator.parameters()[static_cast<size_t>(lhs->parameter)]->shape.element_type() != plan.type) {
    return std::nullopt;
  }
  // compare(rhs element, lhs element) LT is a descending sort.
  plan.descending = (direction == ComparisonDirection::kGt) != (lhs->parameter % 2 == 1);
  const ComparisonType type = root->attrs.comparison_type;
  if (LayoutOf(plan.type).has_value()) {
    if (lhs->canonical) {
      if (type != ComparisonType::kTotalOrder) return std::nullopt;
      plan.order = SortKeyPlan::Order::kCanonicalTotalOrder;
      plan.nan_bits = lhs->nan_bits;
      plan.zero_bits = lhs->zero_bits;
    } else if (type == ComparisonType::kTotalOrder) {
      plan.order = SortKeyPlan::Order::kTotalOrder;
    } else if (type == ComparisonType::kDefault || type == ComparisonType::kFloat) {
      plan.order = SortKeyPlan::Order::kFloat;
    } else {
      return std::nullopt;
    }
  } else if (IsIntegral(plan.type) && !lhs->canonical) {
    const bool fits = type == ComparisonType::kDefault ||
                      (type == ComparisonType::kSigned && IsSignedIntegral(plan.type)) ||
                      (type == ComparisonType::kUnsigned && IsUnsignedIntegral(plan.type));
    if (!fits) return std::nullopt;
    plan.order = SortKeyPlan::Order::kInteger;
  } else {
    return std::nullopt;
  }
  // Positions are kept as 32-bit indices.
  const int64_t rank = shape.rank();
  int64_t dimension = sort.attrs.dimensions.empty() ? rank - 1 : sort.attrs.dimensions[0];
  if (dimension < 0) dimension += rank;
  if (rank > 0 && (dimension < 0 || dimension >= rank)) return std::nullopt;
  if (rank > 0 && shape.dimensions(dimension) >= int64_t{std::numeric_limits<uint32_t>::max()}) {
    return std::nullopt;
  }
  return plan;
}

SortThunk::SortThunk(std::vector<int> inputs, std::vector<int> outputs, SortGeometry geometry,
                     std::unique_ptr<LibraryThunk> fallback)
    : Thunk(std::move(inputs), std::move(outputs)),
      geometry_(std::move(geometry)),
      fallback_(std::move(fallback)) {
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

void SortThunk::SortSlices(void* const* slots, int64_t begin, int64_t end) const {
  const size_t operands = inputs_.size();
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

void SortThunk::SortSlicesByKey(void* const* slots, int64_t begin, int64_t end,
                                const IntraOpThreadPool* pool) const {
  const KeySortJob job{&*key_plan_, &inputs_, &outputs_, &geometry_.element_bytes, length_, inner_};
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
  if (!by_key && comparator_ == nullptr) return fallback_->Run(context);
  if (length_ == 0 || slices_ == 0) return OkStatus();
  void* const* slots = context.slots;
  auto sort = [&](int64_t begin, int64_t end) {
    if (by_key) {
      SortSlicesByKey(slots, begin, end, nullptr);
    } else {
      SortSlices(slots, begin, end);
    }
  };
  const int64_t grain = std::max<int64_t>(1, kSortElementsPerTask / std::max<int64_t>(1, length_));
  if (slices_ <= grain || context.pool == nullptr || context.pool->num_threads() == 1) {
    // Few slices: a large one spreads its own work over the threads.
    if (by_key) {
      SortSlicesByKey(slots, 0, slices_, context.pool);
    } else {
      SortSlices(slots, 0, slices_);
    }
  } else {
    context.pool->ParallelFor(slices_, grain, sort);
  }
  return OkStatus();
}

}  // namespace kiln::cpu
