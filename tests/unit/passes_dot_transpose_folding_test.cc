// Dot-transpose folding: transpose(A.B) becomes B'.A' without moving data,
// only where the product has no other user and no batch dimensions.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/pass.h"
#include "core/passes/dot_transpose_folding.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

std::unique_ptr<Module> ParseFoldingModule(const std::string& text) {
  auto module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

Literal FloatRamp(std::vector<int64_t> dims, float scale) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<float> values;
  for (int64_t i = 0; i < count; ++i) values.push_back(scale * static_cast<float>((i * 5) % 9) - 1.5f);
  return Literal::FromVector<float>(values, std::move(dims));
}

int CountOpcode(const Computation& computation, Opcode opcode) {
  int count = 0;
  for (const auto& instruction : computation.instructions()) count += instruction->opcode == opcode;
  return count;
}

// Runs the pass (and DCE, under the verifier) on a copy; checks the
// interpreter computes the same leaves; returns the copy and whether it changed.
std::unique_ptr<Module> FoldAndCompare(const Module& module, const std::vector<Literal>& arguments,
                                       bool* changed) {
  std::unique_ptr<Module> folded = module.Clone();
  PassPipeline pipeline;
  pipeline.AddPass(std::make_unique<DotTransposeFolding>());
  pipeline.AddPass(std::make_unique<DeadCodeElimination>());
  auto result = pipeline.Run(*folded);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  *changed = result.ok() && *result;
  testing::ExpectSameResults(module, *folded, arguments);
  return folded;
}

TEST(PassesDotTransposeFoldingTest, TransposedProductSwapsItsOperands) {
  auto module = ParseFoldingModule(R"(HloModule m
ENTRY main {
  a = f32[3,4] parameter(0)
  b = f32[4,5] parameter(1)
  c = f32[5,3] parameter(2)
  d = f32[3,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[5,3] transpose(d), dimensions={1,0}
  ROOT r = f32[5,3] add(t, c)
})");
  ASSERT_NE(module, nullptr);
  bool changed = false;
  auto folded = FoldAndCompare(
      *module, {FloatRamp({3, 4}, 0.5f), FloatRamp({4, 5}, 0.25f), FloatRamp({5, 3}, 1.0f)}, &changed);
  EXPECT_TRUE(changed);
  const Computation& entry = *folded->entry();
  EXPECT_EQ(CountOpcode(entry, Opcode::kTranspose), 0);
  ASSERT_EQ(CountOpcode(entry, Opcode::kDot), 1);
  const Instruction* dot = entry.root()->operand(0);
  ASSERT_EQ(dot->opcode, Opcode::kDot);
  EXPECT_EQ(dot->operand(0)->name, "b");
  EXPECT_EQ(dot->operand(1)->name, "a");
  EXPECT_EQ(dot->attrs.dot->lhs_contracting_dimensions, std::vector<int64_t>{0});
  EXPECT_EQ(dot->attrs.dot->rhs_contracting_dimensions, std::vector<int64_t>{1});
}

TEST(PassesDotTransposeFoldingTest, OperandPrecisionsSwapWithTheOperands) {
  auto module = ParseFoldingModule(R"(HloModule m
ENTRY main {
  a = f32[3,4] parameter(0)
  b = f32[4,5] parameter(1)
  d = f32[3,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,default}
  ROOT t = f32[5,3] transpose(d), dimensions={1,0}
})");
  ASSERT_NE(module, nullptr);
  bool changed = false;
  auto folded = FoldAndCompare(*module, {FloatRamp({3, 4}, 0.5f), FloatRamp({4, 5}, 0.25f)}, &changed);
  EXPECT_TRUE(changed);
  const Instruction* dot = folded->entry()->root();
  ASSERT_EQ(dot->opcode, Opcode::kDot);
  EXPECT_EQ(dot->operand(0)->name, "b");
  EXPECT_EQ(dot->attrs.operand_precision,
            (std::vector<OperandPrecision>{OperandPrecision::kDefault, OperandPrecision::kHighest}));
}

// A weight gradient as JAX writes it: x' . g contracts the batch (dimension
// 0 of both), and the update reads it transposed.
TEST(PassesDotTransposeFoldingTest, ContractingLeadingDimensions) {
  auto module = ParseFoldingModule(R"(HloModule m
ENTRY main {
  x = f32[6,4] parameter(0)
  g = f32[6,3] parameter(1)
  d = f32[4,3] dot(x, g), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT t = f32[3,4] transpose(d), dimensions={1,0}
})");
  ASSERT_NE(module, nullptr);
  bool changed = false;
  auto folded = FoldAndCompare(*module, {FloatRamp({6, 4}, 0.5f), FloatRamp({6, 3}, 0.75f)}, &changed);
  EXPECT_TRUE(changed);
  EXPECT_EQ(folded->entry()->root()->opcode, Opcode::kDot);
}

TEST(PassesDotTransposeFoldingTest, ProductWithAnotherUserStays) {
  auto module = ParseFoldingModule(R"(HloModule m
ENTRY main {
  a = f32[3,4] parameter(0)
  b = f32[4,5] parameter(1)
  d = f32[3,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[5,3] transpose(d), dimensions={1,0}
  ROOT r = (f32[5,3], f32[3,5]) tuple(t, d)
})");
  ASSERT_NE(module, nullptr);
  bool changed = true;
  auto folded = FoldAndCompare(*module, {FloatRamp({3, 4}, 0.5f), FloatRamp({4, 5}, 0.25f)}, &changed);
  EXPECT_FALSE(changed);
  EXPECT_EQ(CountOpcode(*folded->entry(), Opcode::kDot), 1);
  EXPECT_EQ(CountOpcode(*folded->entry(), Opcode::kTranspose), 1);
}

TEST(PassesDotTransposeFoldingTest, BatchedProductStays) {
  auto module = ParseFoldingModule(R"(HloModule m
ENTRY main {
  a = f32[2,3,4] parameter(0)
  b = f32[2,4,5] parameter(1)
  d = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  ROOT t = f32[2,5,3] transpose(d), dimensions={0,2,1}
})");
  ASSERT_NE(module, nullptr);
  bool changed = true;
  FoldAndCompare(*module, {FloatRamp({2, 3, 4}, 0.5f), FloatRamp({2, 4, 5}, 0.25f)}, &changed);
  EXPECT_FALSE(changed);
}

}  // namespace
}  // namespace kiln
