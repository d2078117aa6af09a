// The vulkan backend's rng-bit-generator (on lavapipe with the validation
// layers on) equals the interpreter's byte for byte, for every layout of
// core/rng_bit_layout.h: Threefry's split of the first even or the largest
// dimension, scalars, narrow and 64-bit elements, two- and three-word
// Philox states and a counter that wraps. The interpreter itself is checked
// against XLA's words in tests/unit/rng_bit_generator_test.cc.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "tests/unit/test_util.h"

namespace kiln::vulkan {
namespace {

struct RngCase {
  std::string algorithm;
  std::string state;  // HLO constant text
  std::string bits_shape;
};

TEST(VulkanRngBitGenerator, EqualsTheInterpreterByteForByte) {
  StatusOr<std::unique_ptr<Backend>> vulkan = CreateBackend("vulkan");
  ASSERT_TRUE(vulkan.ok()) << "the vulkan backend is needed (lavapipe: .ci/install-deps): "
                           << vulkan.status().ToString();
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> interpreter, CreateBackend("interpreter"));
  const std::string two = "u64[2] constant({1311768467750121217, 5})";
  const std::string wraps = "u64[2] constant({1311768467750121217, 18446744073709551615})";
  const std::string three = "u64[3] constant({1311768467750121217, 18446744073709551614, 7})";
  const std::vector<RngCase> cases = {
      {"rng_three_fry", two, "u32[3,5]"},   {"rng_three_fry", two, "u32[4,6]"},
      {"rng_three_fry", two, "s32[3,4,7]"}, {"rng_three_fry", two, "u8[7]"},
      {"rng_three_fry", two, "u16[5,3]"},   {"rng_three_fry", two, "u64[3]"},
      {"rng_three_fry", two, "u32[]"},      {"rng_philox", two, "u32[5]"},
      {"rng_default", two, "u32[2,3]"},     {"rng_philox", two, "u64[3]"},
      {"rng_philox", two, "u16[2,3]"},      {"rng_philox", two, "u8[9]"},
      {"rng_philox", wraps, "u32[6]"},      {"rng_philox", three, "u32[11]"},
      {"rng_philox", three, "s64[5]"},
  };
  for (const RngCase& c : cases) {
    const std::string what = c.algorithm + " " + c.state + " -> " + c.bits_shape;
    SCOPED_TRACE(what);
    const std::string state_shape = c.state.substr(0, c.state.find(' '));
    const std::string text = "HloModule m\nENTRY e {\n  s = " + c.state + "\n  ROOT r = (" + state_shape +
                             ", " + c.bits_shape + ") rng-bit-generator(s), algorithm=" + c.algorithm +
                             "\n}\n";
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseHloModule(text));
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, testing::ExecuteLeaves(*interpreter, *module, {}));
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> got, testing::ExecuteLeaves(**vulkan, *module, {}));
    ASSERT_EQ(got.size(), want.size());
    for (size_t leaf = 0; leaf < want.size(); ++leaf) {
      ASSERT_EQ(got[leaf].shape(), want[leaf].shape()) << "leaf " << leaf;
      const auto expected = want[leaf].raw();
      const auto actual = got[leaf].raw();
      ASSERT_EQ(actual.size(), expected.size());
      EXPECT_EQ(std::memcmp(actual.data(), expected.data(), expected.size()), 0) << "leaf " << leaf;
    }
  }
}

}  // namespace
}  // namespace kiln::vulkan
