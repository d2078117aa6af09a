// Transposes that run the library transpose shader (library_transpose.h) on
// lavapipe with the validation layers on, against the interpreter bit for
// bit: every element width (8, 16, 32, 64 and 128 bits), shapes that are no
// multiple of the tile, and 2-D to 4-D permutations.
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "tests/unit/test_util.h"
#include "tests/vulkan/interpreter_agreement.h"
#include "tests/vulkan/library_shader_test.h"

namespace kiln::vulkan {
namespace {

struct TransposeCase {
  std::string type;
  std::vector<int64_t> dimensions;
  std::vector<int64_t> permutation;
};

std::string Joined(const std::vector<int64_t>& values) {
  std::string text;
  for (int64_t value : values) text += (text.empty() ? "" : ",") + std::to_string(value);
  return text;
}

std::string TransposeModule(const TransposeCase& c) {
  std::vector<int64_t> result;
  for (int64_t input : c.permutation) result.push_back(c.dimensions[static_cast<size_t>(input)]);
  return "HloModule transpose\nENTRY main {\n  p = " + c.type + "[" + Joined(c.dimensions) +
         "] parameter(0)\n  ROOT t = " + c.type + "[" + Joined(result) + "] transpose(p), dimensions={" +
         Joined(c.permutation) + "}\n}\n";
}

// Distinct bytes in [0, 0x3f]: finite values of every float type (the
// exponent's top bit is clear), 0 or 1 for pred.
Literal DistinctValues(const Shape& shape) {
  Literal literal(shape);
  uint32_t state = 12345;
  for (uint8_t& byte : literal.raw()) {
    state = state * 1664525u + 1013904223u;
    byte = static_cast<uint8_t>(state >> 26);
    if (shape.element_type() == ElementType::kPred) byte &= 1;
  }
  return literal;
}

// The case as its module says it (GoogleTest would print the bytes).
void PrintTo(const TransposeCase& c, std::ostream* out) { *out << TransposeModule(c); }

// Runs `module` on the vulkan backend and the interpreter and compares
// their results byte for byte.
void ExpectSameBits(const std::string& text, const Module& module) {
  std::vector<Literal> arguments;
  arguments.push_back(DistinctValues(module.entry()->parameters()[0]->shape));
  KILN_ASSERT_OK_AND_ASSIGN(InterpreterAndVulkanLeaves leaves, RunOnInterpreterAndVulkan(module, arguments));
  const std::vector<Literal>& want = leaves.interpreter;
  const std::vector<Literal>& got = leaves.vulkan;
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].shape(), want[0].shape());
  const std::span<const uint8_t> expected = want[0].raw(), actual = got[0].raw();
  ASSERT_EQ(actual.size(), expected.size());
  int64_t wrong = 0, first_wrong = -1;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (actual[i] == expected[i]) continue;
    if (wrong++ == 0) first_wrong = static_cast<int64_t>(i);
  }
  EXPECT_EQ(wrong, 0) << text << "first wrong byte " << first_wrong;
}

using VulkanLibraryTransposeTest = LibraryShaderTest<TransposeCase>;

TEST_P(VulkanLibraryTransposeTest, MovesTheInterpretersBits) {
  const TransposeCase& c = GetParam();
  const std::string text = TransposeModule(c);
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseHloModule(text));

  ForThisDeviceAndAGpu(*module, std::nullopt, text, [&] { ExpectSameBits(text, *module); });
}

std::vector<TransposeCase> TransposeCases() {
  std::vector<TransposeCase> cases;
  // One type of each width on every shape; the other types of a width on one.
  for (const char* type : {"u8", "f16", "f32", "s64", "c128"}) {
    cases.push_back({type, {33, 47}, {1, 0}});
    cases.push_back({type, {5, 37, 19}, {2, 0, 1}});
    cases.push_back({type, {3, 4, 17, 9}, {0, 3, 1, 2}});
    cases.push_back({type, {3, 4, 17, 9}, {3, 2, 1, 0}});
  }
  for (const char* type : {"pred", "s8", "bf16", "s16", "s32", "f64", "c64"})
    cases.push_back({type, {70, 3, 65}, {2, 1, 0}});
  // Many planes of small tiles, and tiles of several outer dimensions.
  cases.push_back({"u8", {60000, 2, 3}, {0, 2, 1}});
  cases.push_back({"s32", {3, 5, 7, 11, 13}, {4, 2, 0, 3, 1}});
  return cases;
}

std::string TransposeCaseName(const ::testing::TestParamInfo<TransposeCase>& info) {
  std::string name =
      info.param.type + "_" + Joined(info.param.dimensions) + "_" + Joined(info.param.permutation);
  for (char& ch : name)
    if (ch == ',') ch = 'x';
  return name + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(Widths, VulkanLibraryTransposeTest, ::testing::ValuesIn(TransposeCases()),
                         TransposeCaseName);

}  // namespace
}  // namespace kiln::vulkan
