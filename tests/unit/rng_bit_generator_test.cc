// rng-bit-generator is XLA's bit for bit: the expected words below were
// printed by JAX 0.10.2 on its CPU backend (`lax.rng_bit_generator` with a
// u64[2] key), so a change of algorithm, counter or element layout fails.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/rng_bit_layout.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

struct KnownAnswer {
  std::string name;
  std::string algorithm;  // HLO text: rng_three_fry, rng_philox, rng_default
  std::vector<uint64_t> state;
  std::string bits_shape;  // HLO text, e.g. "u32[3,5]"
  std::vector<uint64_t> new_state;
  std::vector<uint64_t> bits;
};

constexpr uint64_t kKey = 0x12345678abcdef01u;

std::vector<KnownAnswer> KnownAnswers() {
  return {
      // No even dimension: the largest (5) is split in halves.
      {"threefry_odd_dims",
       "rng_three_fry",
       {kKey, 5},
       "u32[3,5]",
       {kKey, 0xe},
       {0x2c762868, 0x2564b169, 0xd29f193e, 0x110b77a6, 0x34038950, 0x7d12fa2f, 0x9a6bb81b, 0xd31361f5,
        0x40078732, 0x6d6ac696, 0x349c5dac, 0xb057c486, 0x5f0d8520, 0x94cddf9d, 0xad9465fc}},
      // The first even dimension (4) is split.
      {"threefry_even_dims",
       "rng_three_fry",
       {kKey, 5},
       "u32[4,6]",
       {kKey, 0x11},
       {0x2c762868, 0xd29f193e, 0x34038950, 0x7d12fa2f, 0xd31361f5, 0x6d6ac696, 0x2564b169, 0x110b77a6,
        0x0b2b95d4, 0x9a6bb81b, 0x40078732, 0xb839808a, 0x349c5dac, 0x5f0d8520, 0xad9465fc, 0x471e9784,
        0x652dcaa2, 0x5909f8f0, 0xb057c486, 0x94cddf9d, 0x31f89dd1, 0x88135ceb, 0x0b4a2d5c, 0x120a711c}},
      // Narrow elements are the low bits of the 32-bit layout's words.
      {"threefry_u8",
       "rng_three_fry",
       {kKey, 5},
       "u8[7]",
       {kKey, 9},
       {0x68, 0x69, 0x3e, 0xa6, 0x50, 0xd4, 0x2f}},
      {"threefry_u64",
       "rng_three_fry",
       {kKey, 5},
       "u64[3]",
       {kKey, 8},
       {0x2564b1692c762868, 0x110b77a6d29f193e, 0x0b2b95d434038950}},
      {"threefry_scalar", "rng_three_fry", {kKey, 5}, "u32[]", {kKey, 6}, {0x2c762868}},
      {"philox_u32",
       "rng_philox",
       {kKey, 5},
       "u32[5]",
       {kKey, 7},
       {0xd7713ff4, 0xbe85be81, 0xb65d4874, 0x437125a1, 0x6112e5e0}},
      // DEFAULT is Philox, as on XLA's CPU backend.
      {"default_is_philox",
       "rng_default",
       {kKey, 5},
       "u32[5]",
       {kKey, 7},
       {0xd7713ff4, 0xbe85be81, 0xb65d4874, 0x437125a1, 0x6112e5e0}},
      {"philox_u64",
       "rng_philox",
       {kKey, 5},
       "u64[3]",
       {kKey, 7},
       {0xbe85be81d7713ff4, 0x437125a1b65d4874, 0xf81be3266112e5e0}},
      {"philox_u16",
       "rng_philox",
       {kKey, 5},
       "u16[2,3]",
       {kKey, 7},
       {0x3ff4, 0xbe81, 0x4874, 0x25a1, 0xe5e0, 0xe326}},
      // The counter's low word wraps; its high word (the key, in a two-word
      // state) takes the carry in the blocks but not in the new state.
      {"philox_counter_wraps",
       "rng_philox",
       {kKey, 0xffffffffffffffffu},
       "u32[6]",
       {kKey, 1},
       {0xff8a07ee, 0x6d6ec937, 0xd3a66577, 0x677a0ad9, 0x775e2b44, 0xe53b7ab4}},
  };
}

std::string StateText(const std::vector<uint64_t>& words) {
  std::string text;
  for (uint64_t word : words) text += (text.empty() ? "" : ", ") + std::to_string(word);
  return "u64[" + std::to_string(words.size()) + "] constant({" + text + "})";
}

class RngBitGeneratorTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RngBitGeneratorTest, EqualsXlaBitForBit) {
  for (const KnownAnswer& answer : KnownAnswers()) {
    SCOPED_TRACE(answer.name);
    const std::string state_shape = "u64[" + std::to_string(answer.state.size()) + "]";
    const std::string text = "HloModule m\nENTRY e {\n  s = " + StateText(answer.state) + "\n  ROOT r = (" +
                             state_shape + ", " + answer.bits_shape +
                             ") rng-bit-generator(s), algorithm=" + answer.algorithm + "\n}\n";
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseHloModule(text));
    KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Run(*module, {}, GetParam()));
    const Literal& state = result.tuple_elements()[0];
    const Literal& bits = result.tuple_elements()[1];
    ASSERT_EQ(state.element_count(), static_cast<int64_t>(answer.new_state.size()));
    for (size_t i = 0; i < answer.new_state.size(); ++i) {
      EXPECT_EQ(state.data<uint64_t>()[i], answer.new_state[i]) << "state word " << i;
    }
    ASSERT_EQ(bits.element_count(), static_cast<int64_t>(answer.bits.size()));
    for (size_t i = 0; i < answer.bits.size(); ++i) {
      EXPECT_EQ(static_cast<uint64_t>(bits.GetAsInt64(static_cast<int64_t>(i))), answer.bits[i])
          << "element " << i;
    }
  }
}

TEST_P(RngBitGeneratorTest, ThreeWordPhiloxStateCarriesIntoItsHighWord) {
  // With u64[3] the counter is (state[1], state[2]): the same bits as a
  // two-word state whose key equals state[2], and the carry is kept.
  auto run = [&](const std::vector<uint64_t>& words) -> StatusOr<Literal> {
    const std::string text = "HloModule m\nENTRY e {\n  s = " + StateText(words) + "\n  ROOT r = (u64[" +
                             std::to_string(words.size()) +
                             "], u32[8]) rng-bit-generator(s), algorithm=rng_philox\n}\n";
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, ParseHloModule(text));
    return testing::Run(*module, {}, GetParam());
  };
  KILN_ASSERT_OK_AND_ASSIGN(Literal three, run({kKey, 0xffffffffffffffffu, kKey}));
  KILN_ASSERT_OK_AND_ASSIGN(Literal two, run({kKey, 0xffffffffffffffffu}));
  EXPECT_EQ(three.tuple_elements()[1], two.tuple_elements()[1]);
  const auto state = three.tuple_elements()[0].data<uint64_t>();
  EXPECT_EQ(state[1], 1u);
  EXPECT_EQ(state[2], kKey + 1);
}

INSTANTIATE_TEST_SUITE_P(Backends, RngBitGeneratorTest, ::testing::Values("interpreter", "cpu"));

TEST(RngBitLayoutTest, RefusesStatesTheAlgorithmCannotUse) {
  const Shape bits(ElementType::kU32, {4});
  EXPECT_EQ(PlanRngBits(RngAlgorithm::kThreeFry, 3, bits).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(PlanRngBits(RngAlgorithm::kPhilox, 4, bits).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(PlanRngBits(RngAlgorithm::kDefault, 1, bits).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(PlanRngBits(RngAlgorithm::kPhilox, 2, Shape(ElementType::kF32, {4})).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(PlanRngBits(RngAlgorithm::kPhilox, 3, bits).ok());
}

TEST(RngBitLayoutTest, ThreefrySplitsTheFirstEvenDimensionElseTheLargest) {
  KILN_ASSERT_OK_AND_ASSIGN(RngBitLayout even,
                            PlanRngBits(RngAlgorithm::kThreeFry, 2, Shape(ElementType::kU32, {3, 4, 6})));
  EXPECT_EQ(even.split_dim, 1);
  EXPECT_EQ(even.blocks, 3u * 2u * 6u);
  KILN_ASSERT_OK_AND_ASSIGN(RngBitLayout odd,
                            PlanRngBits(RngAlgorithm::kThreeFry, 2, Shape(ElementType::kU32, {3, 7, 5})));
  EXPECT_EQ(odd.split_dim, 1);
  EXPECT_EQ(odd.blocks, 3u * 4u * 5u);
  // Element (1, 3, 2) of u32[3,7,5]: index 3 along the split dimension is
  // word 1 of the block at (1, 1, 2) in u32[3,4,5].
  const RngBitSource source = RngBitSourceOf(odd, (1 * 7 + 3) * 5 + 2);
  EXPECT_EQ(source.word, 1);
  EXPECT_EQ(source.block, static_cast<uint64_t>((1 * 4 + 1) * 5 + 2));
}

TEST(RngBitLayoutTest, ShapeInferenceRefusesAThreeWordThreefryState) {
  const std::string text =
      "HloModule m\nENTRY e {\n  s = u64[3] parameter(0)\n"
      "  ROOT r = (u64[3], u32[4]) rng-bit-generator(s), algorithm=rng_three_fry\n}\n";
  const auto module = ParseHloModule(text);
  ASSERT_FALSE(module.ok());
  EXPECT_NE(module.status().message().find("THREE_FRY needs a state of u64[2]"), std::string::npos)
      << module.status().ToString();
}

}  // namespace
}  // namespace kiln
