// Int8 contraction narrowing: an s32 dot of s8 operands widened to s32 runs
// on the s8 operands, with the same results; other dots stay as they are.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/pass.h"
#include "core/passes/int8_contraction_narrowing.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

std::unique_ptr<Module> ParseNarrowingModule(const std::string& text) {
  auto module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

// s8 values from -128 to 127, both extremes included.
Literal NarrowingInt8Ramp(std::vector<int64_t> dims, int step) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<int8_t> values;
  for (int64_t i = 0; i < count; ++i) values.push_back(static_cast<int8_t>((i * step) % 256 - 128));
  values[0] = 127;
  return Literal::FromVector<int8_t>(values, std::move(dims));
}

// Runs the pass on a copy, expects the interpreter's results unchanged, and
// returns the copy; `changed` says whether the pass changed it.
std::unique_ptr<Module> Narrow(const Module& module, const std::vector<Literal>& arguments, bool* changed) {
  std::unique_ptr<Module> narrowed = module.Clone();
  PassPipeline pipeline;
  pipeline.AddPass(std::make_unique<Int8ContractionNarrowing>());
  auto result = pipeline.Run(*narrowed);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  *changed = result.ok() && *result;
  testing::ExpectSameResults(module, *narrowed, arguments);
  return narrowed;
}

TEST(PassesInt8ContractionNarrowingTest, WidenedOperandsAreRead) {
  auto module = ParseNarrowingModule(R"(HloModule m
ENTRY e {
  a = s8[3,5] parameter(0)
  b = s8[5,4] parameter(1)
  wa = s32[3,5] convert(a)
  wb = s32[5,4] convert(b)
  ROOT d = s32[3,4] dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_NE(module, nullptr);
  bool changed = false;
  auto narrowed = Narrow(*module, {NarrowingInt8Ramp({3, 5}, 37), NarrowingInt8Ramp({5, 4}, 71)}, &changed);
  EXPECT_TRUE(changed);
  const Instruction* root = narrowed->entry()->root();
  ASSERT_EQ(root->opcode, Opcode::kDot);
  EXPECT_EQ(root->shape.element_type(), ElementType::kS32);
  EXPECT_EQ(root->operand(0)->opcode, Opcode::kParameter);
  EXPECT_EQ(root->operand(1)->opcode, Opcode::kParameter);
  // The converts had no other reader and are gone.
  for (const auto& instruction : narrowed->entry()->instructions()) {
    EXPECT_NE(instruction->opcode, Opcode::kConvert) << instruction->ToString();
  }
}

TEST(PassesInt8ContractionNarrowingTest, ConvertWithOtherReadersStays) {
  auto module = ParseNarrowingModule(R"(HloModule m
ENTRY e {
  a = s8[3,5] parameter(0)
  b = s8[5,4] parameter(1)
  wa = s32[3,5] convert(a)
  wb = s32[5,4] convert(b)
  d = s32[3,4] dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (s32[3,4], s32[3,5]) tuple(d, wa)
})");
  ASSERT_NE(module, nullptr);
  bool changed = false;
  auto narrowed = Narrow(*module, {NarrowingInt8Ramp({3, 5}, 37), NarrowingInt8Ramp({5, 4}, 71)}, &changed);
  EXPECT_TRUE(changed);
  const Instruction* root = narrowed->entry()->root();
  EXPECT_EQ(root->operand(0)->operand(0)->shape.element_type(), ElementType::kS8);
  EXPECT_EQ(root->operand(1)->opcode, Opcode::kConvert);
}

TEST(PassesInt8ContractionNarrowingTest, OtherDotsStay) {
  // One operand widened from s16, one from s8: not an s8 x s8 product.
  auto module = ParseNarrowingModule(R"(HloModule m
ENTRY e {
  a = s16[3,5] parameter(0)
  b = s8[5,4] parameter(1)
  wa = s32[3,5] convert(a)
  wb = s32[5,4] convert(b)
  ROOT d = s32[3,4] dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_NE(module, nullptr);
  std::unique_ptr<Module> copy = module->Clone();
  PassPipeline pipeline;
  pipeline.AddPass(std::make_unique<Int8ContractionNarrowing>());
  KILN_ASSERT_OK_AND_ASSIGN(bool changed, pipeline.Run(*copy));
  EXPECT_FALSE(changed);
}

}  // namespace
}  // namespace kiln
