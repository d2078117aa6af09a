#include "backends/cpu/rng_bit_generator_thunk.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "backends/cpu/thread_pool.h"

namespace kiln::cpu {
namespace {

static_assert(std::endian::native == std::endian::little, "bits are stored as little-endian words");

// Counter blocks enciphered together: plain loops over arrays this long,
// which the compiler turns into whole-register operations (4 AVX-512 or 8
// AVX2 registers per word).
constexpr int kLanes = 64;

// Blocks one task of the thread pool takes at least (tens of microseconds).
constexpr int64_t kBlocksPerTask = 16384;

// Threefry-2x32 with 20 rounds (Salmon et al., "Parallel random numbers: as
// easy as 1, 2, 3", 2011) on the kLanes 64-bit counters base + i, as the
// interpreter's Threefry2x32 (core/interpreter/rng.cc) computes one.
[[gnu::always_inline]] inline void ThreefryLanes(uint32_t k0, uint32_t k1, uint64_t base,
                                                 uint32_t* __restrict w0, uint32_t* __restrict w1) {
  static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};
  for (int i = 0; i < kLanes; ++i) {
    const uint64_t counter = base + static_cast<uint64_t>(i);
    w0[i] = static_cast<uint32_t>(counter) + ks[0];
    w1[i] = static_cast<uint32_t>(counter >> 32) + ks[1];
  }
  for (int round = 0; round < 20; ++round) {
    const int r = kRotations[round % 8];
    for (int i = 0; i < kLanes; ++i) {
      w0[i] += w1[i];
      w1[i] = ((w1[i] << r) | (w1[i] >> (32 - r))) ^ w0[i];
    }
    if (round % 4 == 3) {
      const int injection = round / 4 + 1;
      const uint32_t add0 = ks[injection % 3];
      const uint32_t add1 = ks[(injection + 1) % 3] + static_cast<uint32_t>(injection);
      for (int i = 0; i < kLanes; ++i) {
        w0[i] += add0;
        w1[i] += add1;
      }
    }
  }
}

// Philox-4x32 with 10 rounds (same paper) on the kLanes 128-bit counters
// (low + i, high + carry), where low = counter_low + first: the carry out of
// the low word is counted from the state's counter_low, as the interpreter's.
[[gnu::always_inline]] inline void PhiloxLanes(uint32_t k0, uint32_t k1, uint64_t counter_low, uint64_t first,
                                               uint64_t counter_high, uint32_t* __restrict c0,
                                               uint32_t* __restrict c1, uint32_t* __restrict c2,
                                               uint32_t* __restrict c3) {
  for (int i = 0; i < kLanes; ++i) {
    const uint64_t low = counter_low + first + static_cast<uint64_t>(i);
    const uint64_t high = counter_high + (low < counter_low ? 1 : 0);
    c0[i] = static_cast<uint32_t>(low);
    c1[i] = static_cast<uint32_t>(low >> 32);
    c2[i] = static_cast<uint32_t>(high);
    c3[i] = static_cast<uint32_t>(high >> 32);
  }
  for (int round = 0; round < 10; ++round) {
    for (int i = 0; i < kLanes; ++i) {
      const uint64_t product0 = uint64_t{0xD2511F53u} * c0[i];
      const uint64_t product1 = uint64_t{0xCD9E8D57u} * c2[i];
      const uint32_t next0 = static_cast<uint32_t>(product1 >> 32) ^ c1[i] ^ k0;
      const uint32_t next2 = static_cast<uint32_t>(product0 >> 32) ^ c3[i] ^ k1;
      c0[i] = next0;
      c1[i] = static_cast<uint32_t>(product1);
      c2[i] = next2;
      c3[i] = static_cast<uint32_t>(product0);
    }
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

// One block cipher per instruction set: the same loops, compiled for it.
struct Ciphers {
  void (*threefry)(uint32_t, uint32_t, uint64_t, uint32_t*, uint32_t*);
  void (*philox)(uint32_t, uint32_t, uint64_t, uint64_t, uint64_t, uint32_t*, uint32_t*, uint32_t*,
                 uint32_t*);
};

void ThreefryBaseline(uint32_t k0, uint32_t k1, uint64_t base, uint32_t* w0, uint32_t* w1) {
  ThreefryLanes(k0, k1, base, w0, w1);
}
void PhiloxBaseline(uint32_t k0, uint32_t k1, uint64_t low, uint64_t first, uint64_t high, uint32_t* c0,
                    uint32_t* c1, uint32_t* c2, uint32_t* c3) {
  PhiloxLanes(k0, k1, low, first, high, c0, c1, c2, c3);
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) void ThreefryAvx2(uint32_t k0, uint32_t k1, uint64_t base, uint32_t* w0,
                                                  uint32_t* w1) {
  ThreefryLanes(k0, k1, base, w0, w1);
}
__attribute__((target("avx2"))) void PhiloxAvx2(uint32_t k0, uint32_t k1, uint64_t low, uint64_t first,
                                                uint64_t high, uint32_t* c0, uint32_t* c1, uint32_t* c2,
                                                uint32_t* c3) {
  PhiloxLanes(k0, k1, low, first, high, c0, c1, c2, c3);
}
__attribute__((target("avx512f,avx512vl,avx512dq"))) void ThreefryAvx512(uint32_t k0, uint32_t k1,
                                                                         uint64_t base, uint32_t* w0,
                                                                         uint32_t* w1) {
  ThreefryLanes(k0, k1, base, w0, w1);
}
__attribute__((target("avx512f,avx512vl,avx512dq"))) void PhiloxAvx512(uint32_t k0, uint32_t k1, uint64_t low,
                                                                       uint64_t first, uint64_t high,
                                                                       uint32_t* c0, uint32_t* c1,
                                                                       uint32_t* c2, uint32_t* c3) {
  PhiloxLanes(k0, k1, low, first, high, c0, c1, c2, c3);
}
#endif

Ciphers CiphersFor(RngVectorIsa isa) {
#if defined(__x86_64__)
  if (isa == RngVectorIsa::kAvx512) return {ThreefryAvx512, PhiloxAvx512};
  if (isa == RngVectorIsa::kAvx2) return {ThreefryAvx2, PhiloxAvx2};
#endif
  (void)isa;
  return {ThreefryBaseline, PhiloxBaseline};
}

// Where the blocks' words go. The output is cut into segments of
// `segment_blocks` consecutive blocks each:
//  - a word stream (Philox; Threefry with 64-bit elements; Threefry with
//    32-bit words split along a dimension of stride 1): the segment's
//    blocks' words in order, word j of its block b being element
//    b * words_per_block + j of the segment's `segment_words` (64-bit
//    elements: two words each, low first), the rest of the last block
//    dropped;
//  - two rows (Threefry split along a dimension of stride > 1): word 0 of
//    the segment's block s is element s of one row, word 1 element s of the
//    next row along the split dimension, when there is one.
struct Placement {
  bool stream = true;
  int words_per_block = 2;
  int64_t segment_blocks = 0;
  int64_t segment_words = 0;  // stream: the words of one segment
  // rows: the split dimension's extent, its pairs of rows, and its stride.
  int64_t extent = 0;
  int64_t halves = 0;
  int64_t stride = 0;
};

Placement PlaceBits(const RngBitPlan& plan) {
  const RngBitLayout& layout = plan.layout;
  Placement placement;
  const int64_t words = plan.element_count * (layout.element_word_bits == 64 ? 2 : 1);
  if (layout.algorithm == RngAlgorithm::kPhilox) {
    placement.words_per_block = 4;
    placement.segment_blocks = static_cast<int64_t>(layout.blocks);
    placement.segment_words = words;
    return placement;
  }
  if (layout.element_word_bits == 64 || layout.split_dim < 0) {
    placement.segment_blocks = static_cast<int64_t>(layout.blocks);
    placement.segment_words = words;
    return placement;
  }
  placement.extent = layout.split_extent;
  placement.halves = (layout.split_extent + 1) / 2;
  placement.stride = layout.split_stride;
  if (layout.split_stride == 1) {
    // Each outer row of the split dimension is a stream of `extent` words.
    placement.segment_blocks = placement.halves;
    placement.segment_words = placement.extent;
    return placement;
  }
  placement.stream = false;
  placement.segment_blocks = layout.split_stride;
  return placement;
}

template <typename E>
void StoreStream(const uint32_t* const words[4], int words_per_block, int64_t first_block, int64_t count,
                 int64_t segment_words, E* __restrict segment) {
  const int64_t first_word = first_block * words_per_block;
  const int64_t last_word = std::min(segment_words, (first_block + count) * words_per_block);
  if (words_per_block == 2 && last_word == (first_block + count) * 2) {
    E* out = segment + first_word;
    for (int64_t i = 0; i < count; ++i) {
      out[2 * i] = static_cast<E>(words[0][i]);
      out[2 * i + 1] = static_cast<E>(words[1][i]);
    }
    return;
  }
  if (words_per_block == 4 && last_word == (first_block + count) * 4) {
    E* out = segment + first_word;
    for (int64_t i = 0; i < count; ++i) {
      out[4 * i] = static_cast<E>(words[0][i]);
      out[4 * i + 1] = static_cast<E>(words[1][i]);
      out[4 * i + 2] = static_cast<E>(words[2][i]);
      out[4 * i + 3] = static_cast<E>(words[3][i]);
    }
    return;
  }
  for (int64_t k = first_word; k < last_word; ++k) {
    const int64_t offset = k - first_word;
    segment[k] = static_cast<E>(words[offset % words_per_block][offset / words_per_block]);
  }
}

template <typename E>
void StoreRows(const uint32_t* const words[4], int64_t first_block, int64_t count, E* __restrict row,
               E* __restrict next_row) {
  for (int64_t i = 0; i < count; ++i) row[first_block + i] = static_cast<E>(words[0][i]);
  if (next_row == nullptr) return;
  for (int64_t i = 0; i < count; ++i) next_row[first_block + i] = static_cast<E>(words[1][i]);
}

// Blocks [begin, end) of the whole output, enciphered kLanes at a time.
template <typename E>
void GenerateBlocks(const RngBitPlan& plan, const Placement& placement, const Ciphers& ciphers,
                    const uint64_t* state, int64_t begin, int64_t end, E* bits) {
  const auto k0 = static_cast<uint32_t>(state[0]);
  const auto k1 = static_cast<uint32_t>(state[0] >> 32);
  const bool philox = plan.layout.algorithm == RngAlgorithm::kPhilox;
  const uint64_t counter_low = state[1];
  // XLA's two-word Philox state is reversed: the key is the counter's high word.
  const uint64_t counter_high = philox ? state[plan.layout.state_words == 3 ? 2 : 0] : 0;
  alignas(64) uint32_t lanes[4][kLanes];
  const uint32_t* const words[4] = {lanes[0], lanes[1], lanes[2], lanes[3]};
  for (int64_t block = begin; block < end;) {
    const int64_t segment = block / placement.segment_blocks;
    const int64_t in_segment = block % placement.segment_blocks;
    const int64_t count = std::min<int64_t>({kLanes, end - block, placement.segment_blocks - in_segment});
    if (philox) {
      ciphers.philox(k0, k1, counter_low, static_cast<uint64_t>(block), counter_high, lanes[0], lanes[1],
                     lanes[2], lanes[3]);
    } else {
      ciphers.threefry(k0, k1, counter_low + static_cast<uint64_t>(block), lanes[0], lanes[1]);
    }
    if (placement.stream) {
      // 64-bit elements are written as their two little-endian words.
      StoreStream(words, placement.words_per_block, in_segment, count, placement.segment_words,
                  bits + segment * placement.segment_words);
    } else {
      const int64_t outer = segment / placement.halves;
      const int64_t along = 2 * (segment % placement.halves);
      E* row = bits + (outer * placement.extent + along) * placement.stride;
      StoreRows(words, in_segment, count, row,
                along + 1 < placement.extent ? row + placement.stride : nullptr);
    }
    block += count;
  }
}

template <typename E>
void GenerateAll(const RngBitPlan& plan, const uint64_t* state, void* bits, RngVectorIsa isa,
                 const IntraOpThreadPool* pool) {
  const Placement placement = PlaceBits(plan);
  const Ciphers ciphers = CiphersFor(isa);
  const auto blocks = static_cast<int64_t>(plan.layout.blocks);
  if (blocks == 0) return;
  auto* out = static_cast<E*>(bits);
  auto run = [&](int64_t begin, int64_t end) {
    GenerateBlocks(plan, placement, ciphers, state, begin, end, out);
  };
  if (pool == nullptr || pool->num_threads() == 1 || blocks <= kBlocksPerTask) {
    run(0, blocks);
  } else {
    pool->ParallelFor(blocks, kBlocksPerTask, run);
  }
}

}  // namespace

std::optional<RngBitPlan> PlanRngBitGenerator(const Instruction& instruction) {
  if (instruction.operands.size() != 1) return std::nullopt;
  const Shape& state = instruction.operand(0)->shape;
  const Shape& shape = instruction.shape;
  if (!state.IsArray() || state.rank() != 1 || state.element_type() != ElementType::kU64 ||
      !shape.IsTuple() || shape.tuple_shapes().size() != 2 || !shape.tuple_shapes(0).IsArray() ||
      !shape.tuple_shapes(1).IsArray() || shape.tuple_shapes(0).element_count() != state.element_count()) {
    return std::nullopt;
  }
  StatusOr<RngBitLayout> layout =
      PlanRngBits(instruction.attrs.rng_algorithm, state.element_count(), shape.tuple_shapes(1));
  if (!layout.ok()) return std::nullopt;
  RngBitPlan plan;
  plan.layout = *layout;
  plan.element_count = shape.tuple_shapes(1).element_count();
  plan.element_bytes = BitWidth(shape.tuple_shapes(1).element_type()) / 8;
  return plan;
}

std::vector<RngVectorIsa> SupportedRngVectorIsas() {
  std::vector<RngVectorIsa> isas = {RngVectorIsa::kBaseline};
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) isas.push_back(RngVectorIsa::kAvx2);
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq")) {
    isas.push_back(RngVectorIsa::kAvx512);
  }
#endif
  return isas;
}

void GenerateRngBits(const RngBitPlan& plan, const uint64_t* state, uint64_t* new_state, void* bits,
                     RngVectorIsa isa, const IntraOpThreadPool* pool) {
  // Read the whole state first: `new_state` may be `state`.
  uint64_t words[3] = {};
  std::memcpy(words, state, static_cast<size_t>(plan.layout.state_words) * sizeof(uint64_t));
  switch (plan.element_bytes) {
    case 1: GenerateAll<uint8_t>(plan, words, bits, isa, pool); break;
    case 2: GenerateAll<uint16_t>(plan, words, bits, isa, pool); break;
    // 64-bit elements are pairs of little-endian words.
    default: GenerateAll<uint32_t>(plan, words, bits, isa, pool); break;
  }
  const uint64_t counter_low = words[1];
  words[1] = counter_low + plan.layout.blocks;
  // A carry out of the counter's low word reaches a third state word only.
  if (plan.layout.algorithm == RngAlgorithm::kPhilox && plan.layout.state_words == 3 &&
      words[1] < counter_low) {
    ++words[2];
  }
  std::memcpy(new_state, words, static_cast<size_t>(plan.layout.state_words) * sizeof(uint64_t));
}

Status RngBitGeneratorThunk::Run(ExecutionContext& context) const {
  static const RngVectorIsa best = SupportedRngVectorIsas().back();
  GenerateRngBits(plan_, static_cast<const uint64_t*>(context.slots[inputs_[0]]),
                  static_cast<uint64_t*>(context.slots[outputs_[0]]), context.slots[outputs_[1]], best,
                  context.pool);
  return OkStatus();
}

}  // namespace kiln::cpu
