// Reduce-window epilogue folding: op(reduce-window(x, init), broadcast(s))
// becomes one fusion of the three, reading x, init and s, when the
// backend's predicate takes it; the interpreter computes the same results
// from it.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/pass.h"
#include "core/passes/reduce_window_epilogue_folding.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

// JAX's average pooling (3x3 windows, stride 2, SAME padding) on
// f32[2,6,6,3]: a windowed sum divided by 9. `extra` is added to the entry
// before its root `o`; `op` is the epilogue.
std::string AveragePoolText(const std::string& extra = "", const std::string& root = "o",
                            const std::string& op = "divide", const std::string& operands = "w, d") {
  return R"(HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[2,6,6,3] parameter(0)
  i = f32[] constant(0)
  w = f32[2,3,3,3] reduce-window(x, i), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=sum
  n = f32[] constant(9)
  d = f32[2,3,3,3] broadcast(n), dimensions={}
  o = f32[2,3,3,3] )" +
         op + "(" + operands + ")\n" + extra + "  ROOT r = f32[2,3,3,3] copy(" + root + ")\n}\n";
}

std::unique_ptr<Module> ParseAveragePool(const std::string& text) {
  auto module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

Literal AveragePoolRamp() {
  std::vector<float> values;
  for (int i = 0; i < 2 * 6 * 6 * 3; ++i) values.push_back(0.37f * static_cast<float>((i * 7) % 23) - 3.0f);
  return Literal::FromVector<float>(values, {2, 6, 6, 3});
}

// Runs the fold with `accepts` on a copy (under the verifier), checks the
// interpreter's results are unchanged, and returns the copy.
std::unique_ptr<Module> FoldWindowEpilogue(const Module& module, bool accepts, bool* changed) {
  std::unique_ptr<Module> folded = module.Clone();
  PassPipeline pipeline;
  pipeline.AddPass(std::make_unique<ReduceWindowEpilogueFolding>([&](const Instruction& fusion) {
    EXPECT_EQ(fusion.opcode, Opcode::kFusion);
    return accepts;
  }));
  auto result = pipeline.Run(*folded);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  *changed = result.ok() && *result;
  testing::ExpectSameResults(module, *folded, std::vector<Literal>{AveragePoolRamp()});
  return folded;
}

int CountEpilogueEntryOpcode(const Module& module, Opcode opcode) {
  int count = 0;
  for (const auto& instruction : module.entry()->instructions()) count += instruction->opcode == opcode;
  return count;
}

TEST(PassesReduceWindowEpilogueFoldingTest, TheWindowedSumAndItsDivideBecomeOneFusion) {
  for (const std::string op : {"divide", "multiply", "add", "subtract"}) {
    SCOPED_TRACE(op);
    auto module = ParseAveragePool(AveragePoolText("", "o", op));
    ASSERT_NE(module, nullptr);
    bool changed = false;
    auto folded = FoldWindowEpilogue(*module, true, &changed);
    EXPECT_TRUE(changed);
    EXPECT_EQ(CountEpilogueEntryOpcode(*folded, Opcode::kReduceWindow), 0);
    EXPECT_EQ(CountEpilogueEntryOpcode(*folded, Opcode::kBroadcast), 0);
    ASSERT_EQ(CountEpilogueEntryOpcode(*folded, Opcode::kFusion), 1);
    const Instruction* fusion = folded->entry()->root()->operand(0);
    ASSERT_EQ(fusion->opcode, Opcode::kFusion);
    EXPECT_EQ(fusion->attrs.fusion_kind, FusionKind::kOutput);
    ASSERT_EQ(fusion->operands.size(), 3u);
    EXPECT_EQ(fusion->operand(0)->name, "x");
    EXPECT_EQ(fusion->operand(1)->name, "i");
    EXPECT_EQ(fusion->operand(2)->name, "n");
    const Instruction* root = fusion->called[0]->root();
    EXPECT_EQ(OpcodeName(root->opcode), op);
    EXPECT_EQ(root->operand(0)->opcode, Opcode::kReduceWindow);
    EXPECT_EQ(root->operand(1)->opcode, Opcode::kBroadcast);
  }
}

TEST(PassesReduceWindowEpilogueFoldingTest, NothingFoldsThatThePredicateRefuses) {
  auto module = ParseAveragePool(AveragePoolText());
  ASSERT_NE(module, nullptr);
  bool changed = true;
  auto folded = FoldWindowEpilogue(*module, false, &changed);
  EXPECT_FALSE(changed);
  EXPECT_EQ(CountEpilogueEntryOpcode(*folded, Opcode::kFusion), 0);
  EXPECT_EQ(CountEpilogueEntryOpcode(*folded, Opcode::kReduceWindow), 1);
}

TEST(PassesReduceWindowEpilogueFoldingTest, ChainsThatAreNotTheFoldStayUnfolded) {
  struct Case {
    std::string what, extra, root, op, operands;
  };
  const Case cases[] = {
      {"the windowed sum read again", "  t = f32[2,3,3,3] add(o, w)\n", "t", "divide", "w, d"},
      {"an op that is not +, -, * or /", "", "o", "maximum", "w, d"},
      {"the scalar on the left", "", "o", "divide", "d, w"},
      {"an array, not a broadcast scalar", "", "o", "divide", "w, w"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    auto module = ParseAveragePool(AveragePoolText(c.extra, c.root, c.op, c.operands));
    ASSERT_NE(module, nullptr);
    bool changed = true;
    auto folded = FoldWindowEpilogue(*module, true, &changed);
    EXPECT_FALSE(changed);
    EXPECT_EQ(CountEpilogueEntryOpcode(*folded, Opcode::kFusion), 0);
    EXPECT_EQ(CountEpilogueEntryOpcode(*folded, Opcode::kReduceWindow), 1);
  }
}

}  // namespace
}  // namespace kiln
