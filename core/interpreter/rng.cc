// Random numbers. `rng` draws from the execution's counter-based stream
// (seeded by ExecuteOptions::rng_seed, so equal seeds give equal numbers;
// the draws and their mapping to elements are core/rng_stream.h's, shared
// with the cpu backend's rng thunk).
// `rng-bit-generator` is a pure function of its state operand, bit for bit
// XLA's (the algorithms and the element layout: core/rng_bit_layout.h).
#include <cmath>
#include <cstring>

#include "core/interpreter/kernels.h"
#include "core/interpreter/scalar_ops.h"
#include "core/rng_bit_layout.h"
#include "core/rng_stream.h"

namespace kiln::interpreter {
namespace {

uint32_t RotateLeft(uint32_t value, int bits) { return (value << bits) | (value >> (32 - bits)); }

void Threefry2x32(uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, uint32_t out[2]) {
  static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};
  uint32_t x0 = c0 + ks[0];
  uint32_t x1 = c1 + ks[1];
  for (int round = 0; round < 20; ++round) {
    x0 += x1;
    x1 = RotateLeft(x1, kRotations[round % 8]);
    x1 ^= x0;
    if (round % 4 == 3) {
      const int injection = round / 4 + 1;
      x0 += ks[injection % 3];
      x1 += ks[(injection + 1) % 3] + static_cast<uint32_t>(injection);
    }
  }
  out[0] = x0;
  out[1] = x1;
}

void Philox4x32(uint32_t k0, uint32_t k1, const uint32_t counter[4], uint32_t out[4]) {
  uint32_t c[4] = {counter[0], counter[1], counter[2], counter[3]};
  for (int round = 0; round < 10; ++round) {
    const uint64_t product0 = uint64_t{0xD2511F53u} * c[0];
    const uint64_t product1 = uint64_t{0xCD9E8D57u} * c[2];
    const uint32_t next[4] = {
        static_cast<uint32_t>(product1 >> 32) ^ c[1] ^ k0, static_cast<uint32_t>(product1),
        static_cast<uint32_t>(product0 >> 32) ^ c[3] ^ k1, static_cast<uint32_t>(product0)};
    std::memcpy(c, next, sizeof(c));
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  std::memcpy(out, c, sizeof(c));
}

}  // namespace

StatusOr<Literal> EvaluateRng(const Instruction& instruction, Operands operands, EvalContext& context) {
  if (operands.size() != 2 || operands[0]->element_count() != 1 || operands[1]->element_count() != 1) {
    return InvalidArgument("rng needs two scalar parameters");
  }
  const Literal& a = *operands[0];
  const Literal& b = *operands[1];
  const bool normal = instruction.attrs.rng_distribution == RngDistribution::kNormal;
  RngStream& stream = *context.rng;
  Literal result(instruction.shape);
  Status status = DispatchElementType(instruction.shape.element_type(), [&](auto tag) -> Status {
    using T = decltype(tag);
    auto out = result.data<T>();
    if constexpr (kIsFloat<T>) {
      const double low = a.GetAsDouble(0);
      const double high = b.GetAsDouble(0);
      for (auto& value : out) {
        if (normal) {
          // Box-Muller: mean `low` (mu), standard deviation `high` (sigma).
          const double first = RngUnitInterval(stream.Next());
          const double second = RngUnitInterval(stream.Next());
          value = static_cast<T>(RngNormalFromUnits(low, high, first, second));
        } else {
          value = RngUniformFloat<T>(low, high, RngUnitInterval(stream.Next()));
        }
      }
      return OkStatus();
    } else if constexpr (kIsInt<T> || kIsPred<T>) {
      if (normal) return InvalidArgument("rng normal needs a floating-point type");
      const int64_t low = a.GetAsInt64(0);
      const int64_t high = b.GetAsInt64(0);
      const uint64_t span = RngIntegerSpan(low, high);
      for (auto& value : out) {
        value = span == 0 ? static_cast<T>(static_cast<uint64_t>(low))
                          : RngUniformInteger<T>(low, span, stream.Next());
      }
      return OkStatus();
    } else {
      return InvalidArgument("rng does not support ", instruction.shape.ToString());
    }
  });
  KILN_RETURN_IF_ERROR(status);
  return result;
}

StatusOr<Literal> EvaluateRngBitGenerator(const Instruction& instruction, Operands operands) {
  const Literal& state = *operands[0];
  const Shape& shape = instruction.shape;
  if (!shape.IsTuple() || shape.tuple_shapes().size() != 2 ||
      state.shape().element_type() != ElementType::kU64) {
    return InvalidArgument("rng-bit-generator needs a u64 state and a (state, bits) result, got ",
                           state.shape().ToString(), " -> ", shape.ToString());
  }
  const Shape& bits_shape = shape.tuple_shapes(1);
  KILN_ASSIGN_OR_RETURN(RngBitLayout layout,
                        PlanRngBits(instruction.attrs.rng_algorithm, state.element_count(), bits_shape));
  auto words = state.data<uint64_t>();
  const auto k0 = static_cast<uint32_t>(words[0]);
  const auto k1 = static_cast<uint32_t>(words[0] >> 32);
  const bool philox = layout.algorithm == RngAlgorithm::kPhilox;
  const uint64_t counter_low = words[1];
  // XLA's two-word Philox state is reversed: the key is the counter's high word.
  const uint64_t counter_high = philox ? words[layout.state_words == 3 ? 2 : 0] : 0;
  // The block's words, computed once for the elements that share it.
  uint32_t block_words[4] = {};
  uint64_t cached_block = ~uint64_t{0};
  auto word_pair = [&](RngBitSource source) -> std::pair<uint32_t, uint32_t> {
    if (source.block != cached_block) {
      cached_block = source.block;
      const uint64_t low = counter_low + source.block;
      if (philox) {
        const uint64_t high = counter_high + (low < counter_low ? 1 : 0);
        const uint32_t counter[4] = {static_cast<uint32_t>(low), static_cast<uint32_t>(low >> 32),
                                     static_cast<uint32_t>(high), static_cast<uint32_t>(high >> 32)};
        Philox4x32(k0, k1, counter, block_words);
      } else {
        Threefry2x32(k0, k1, static_cast<uint32_t>(low), static_cast<uint32_t>(low >> 32), block_words);
      }
    }
    return {block_words[source.word], block_words[(source.word + 1) % 4]};
  };
  Literal bits(bits_shape);
  auto out = bits.raw();
  const int64_t bytes = BitWidth(bits_shape.element_type()) / 8;
  for (int64_t element = 0; element < bits_shape.element_count(); ++element) {
    const auto [first, second] = word_pair(RngBitSourceOf(layout, element));
    // Little-endian bytes: a narrow element keeps its word's low bits.
    const uint64_t value = bytes == 8 ? (uint64_t{second} << 32) | first : first;
    std::memcpy(out.data() + element * bytes, &value, static_cast<size_t>(bytes));
  }
  Literal new_state = state;
  auto out_state = new_state.data<uint64_t>();
  out_state[1] = counter_low + layout.blocks;
  if (philox && layout.state_words == 3 && out_state[1] < counter_low) ++out_state[2];
  std::vector<Literal> elements;
  elements.push_back(std::move(new_state));
  elements.push_back(std::move(bits));
  return Literal::Tuple(std::move(elements));
}

}  // namespace kiln::interpreter
