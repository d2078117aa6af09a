// Select-and-scatter folding: slice(select-and-scatter(pad(x, v), s, i))
// becomes one fusion of the three, reading x, v, s and i, when the backend's
// predicate takes it; the interpreter computes the same results from it.
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/pass.h"
#include "core/passes/select_and_scatter_folding.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

// JAX's max-pool gradient (3x3 windows, stride 2, SAME padding) on
// f32[2,6,6,3]; `extra` is added to the entry before its root `o`; `source`
// defines s (a parameter unless told).
std::string MaxPoolGradientText(const std::string& extra = "", const std::string& root = "o",
                                const std::string& source = "s = f32[2,3,3,3] parameter(1)") {
  return R"(HloModule m
select {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
scatter {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[2,6,6,3] parameter(0)
  )" + source +
         R"(
  v = f32[] constant(-inf)
  p = f32[2,8,8,3] pad(x, v), padding=0_0x1_1x1_1x0_0
  i = f32[] constant(0)
  g = f32[2,8,8,3] select-and-scatter(p, s, i), window={size=1x3x3x1 stride=1x2x2x1}, select=select, scatter=scatter
  o = f32[2,6,6,3] slice(g), slice={[0:2], [1:7], [1:7], [0:3]}
)" + extra +
         "  ROOT r = f32[2,6,6,3] copy(" + root + ")\n}\n";
}

std::unique_ptr<Module> ParseSelectAndScatterModule(const std::string& text) {
  auto module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

// Repeats (ties), and with `infinities` a few -inf, which tie with the padding.
Literal SelectAndScatterRamp(std::vector<int64_t> dims, float scale, bool infinities) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<float> values;
  for (int64_t i = 0; i < count; ++i) {
    values.push_back(infinities && i % 11 == 0 ? -std::numeric_limits<float>::infinity()
                                               : scale * static_cast<float>((i * 7) % 13) - 2.0f);
  }
  return Literal::FromVector<float>(values, std::move(dims));
}

// Runs the fold with `accepts` on a copy (under the verifier), checks the
// interpreter's results are unchanged (on `source` as parameter 1, a ramp
// of the source's shape unless given), and returns the copy.
std::unique_ptr<Module> FoldSelectAndScatter(const Module& module, bool accepts, bool* changed,
                                             const Literal* source = nullptr) {
  std::unique_ptr<Module> folded = module.Clone();
  int asked = 0;
  PassPipeline pipeline;
  pipeline.AddPass(std::make_unique<SelectAndScatterFolding>([&](const Instruction& fusion) {
    ++asked;
    EXPECT_EQ(fusion.opcode, Opcode::kFusion);
    return accepts;
  }));
  auto result = pipeline.Run(*folded);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  *changed = result.ok() && *result;
  testing::ExpectSameResults(
      module, *folded,
      std::vector<Literal>{SelectAndScatterRamp({2, 6, 6, 3}, 0.5f, true),
                           source != nullptr ? *source : SelectAndScatterRamp({2, 3, 3, 3}, 1.0f, false)});
  return folded;
}

int CountEntryOpcode(const Module& module, Opcode opcode) {
  int count = 0;
  for (const auto& instruction : module.entry()->instructions()) count += instruction->opcode == opcode;
  return count;
}

TEST(PassesSelectAndScatterFoldingTest, PadSelectAndScatterAndSliceBecomeOneFusion) {
  auto module = ParseSelectAndScatterModule(MaxPoolGradientText());
  ASSERT_NE(module, nullptr);
  bool changed = false;
  auto folded = FoldSelectAndScatter(*module, true, &changed);
  EXPECT_TRUE(changed);
  EXPECT_EQ(CountEntryOpcode(*folded, Opcode::kPad), 0);
  EXPECT_EQ(CountEntryOpcode(*folded, Opcode::kSelectAndScatter), 0);
  EXPECT_EQ(CountEntryOpcode(*folded, Opcode::kSlice), 0);
  ASSERT_EQ(CountEntryOpcode(*folded, Opcode::kFusion), 1);
  const Instruction* fusion = folded->entry()->root()->operand(0);
  ASSERT_EQ(fusion->opcode, Opcode::kFusion);
  EXPECT_EQ(fusion->attrs.fusion_kind, FusionKind::kOutput);
  ASSERT_EQ(fusion->operands.size(), 4u);
  EXPECT_EQ(fusion->operand(0)->name, "x");
  EXPECT_EQ(fusion->operand(1)->name, "v");
  EXPECT_EQ(fusion->operand(2)->name, "s");
  EXPECT_EQ(fusion->operand(3)->name, "i");
  const Instruction* root = fusion->called[0]->root();
  EXPECT_EQ(root->opcode, Opcode::kSlice);
  EXPECT_EQ(root->operand(0)->opcode, Opcode::kSelectAndScatter);
  EXPECT_EQ(root->operand(0)->operand(0)->opcode, Opcode::kPad);
}

TEST(PassesSelectAndScatterFoldingTest, ABroadcastScalarSourceFoldsInAndTheFusionReadsTheScalar) {
  // The gradient of a sum: s = broadcast(c); read by nothing else, it runs
  // inside the fusion, which reads c; read again, s stays an operand.
  const std::string broadcast = "c = f32[] parameter(1)\n  s = f32[2,3,3,3] broadcast(c), dimensions={}";
  const Literal scalar = Literal::Scalar<float>(1.5f);
  for (const bool read_again : {false, true}) {
    SCOPED_TRACE(read_again);
    const std::string read =
        "  t = f32[2,6,6,3] pad(s, i), padding=0_0x1_2x1_2x0_0\n  u = f32[2,6,6,3] add(o, t)\n";
    auto module = ParseSelectAndScatterModule(read_again ? MaxPoolGradientText(read, "u", broadcast)
                                                         : MaxPoolGradientText("", "o", broadcast));
    ASSERT_NE(module, nullptr);
    bool changed = false;
    auto folded = FoldSelectAndScatter(*module, true, &changed, &scalar);
    EXPECT_TRUE(changed);
    const Instruction* fusion = nullptr;
    for (const auto& instruction : folded->entry()->instructions()) {
      if (instruction->opcode == Opcode::kFusion) fusion = instruction.get();
    }
    ASSERT_NE(fusion, nullptr);
    ASSERT_EQ(fusion->operands.size(), 4u);
    EXPECT_EQ(fusion->operand(2)->name, read_again ? "s" : "c");
    EXPECT_EQ(CountEntryOpcode(*folded, Opcode::kBroadcast), read_again ? 1 : 0);
    const Instruction* source = fusion->called[0]->root()->operand(0)->operand(1);
    EXPECT_EQ(source->opcode, read_again ? Opcode::kParameter : Opcode::kBroadcast);
  }
}

TEST(PassesSelectAndScatterFoldingTest, NothingFoldsThatThePredicateRefuses) {
  auto module = ParseSelectAndScatterModule(MaxPoolGradientText());
  ASSERT_NE(module, nullptr);
  bool changed = true;
  auto folded = FoldSelectAndScatter(*module, false, &changed);
  EXPECT_FALSE(changed);
  EXPECT_EQ(CountEntryOpcode(*folded, Opcode::kFusion), 0);
  EXPECT_EQ(CountEntryOpcode(*folded, Opcode::kSelectAndScatter), 1);
}

TEST(PassesSelectAndScatterFoldingTest, APadOrResultWithAnotherUserStaysUnfolded) {
  // The pad read again (its -infs kept out of the result by a maximum); the
  // select-and-scatter's result read again.
  const std::string pad_read =
      "  q = f32[2,6,6,3] slice(p), slice={[0:2], [1:7], [1:7], [0:3]}\n"
      "  t = f32[2,6,6,3] maximum(o, q)\n";
  const std::string result_read =
      "  h = f32[2,6,6,3] slice(g), slice={[0:2], [0:6], [0:6], [0:3]}\n"
      "  t = f32[2,6,6,3] add(o, h)\n";
  for (const std::string& extra : {pad_read, result_read}) {
    auto module = ParseSelectAndScatterModule(MaxPoolGradientText(extra, "t"));
    ASSERT_NE(module, nullptr);
    bool changed = true;
    auto folded = FoldSelectAndScatter(*module, true, &changed);
    EXPECT_FALSE(changed) << extra;
    EXPECT_EQ(CountEntryOpcode(*folded, Opcode::kFusion), 0) << extra;
  }
}

}  // namespace
}  // namespace kiln
