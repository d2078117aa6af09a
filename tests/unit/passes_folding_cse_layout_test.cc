// Constant folding, CSE, layout normalisation and batch-norm expansion.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/interpreter/interpreter_backend.h"
#include "core/pass.h"
#include "core/passes/batch_norm_expander.h"
#include "core/passes/constant_folding.h"
#include "core/passes/cse.h"
#include "core/passes/layout_normalization.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

std::unique_ptr<Module> ParseCseModule(const std::string& text) {
  auto module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

// Runs `pass` then DCE under the verifier; returns whether `pass` changed the module.
bool RunPass(std::unique_ptr<Pass> pass, Module& module) {
  PassPipeline pipeline;
  pipeline.AddPass(std::move(pass));
  pipeline.AddPass(std::make_unique<DeadCodeElimination>());
  auto changed = pipeline.Run(module);
  EXPECT_TRUE(changed.ok()) << changed.status().ToString();
  return changed.ok() && *changed;
}

int CountInstructions(const Computation& computation, Opcode opcode) {
  int count = 0;
  for (const auto& instruction : computation.instructions()) count += instruction->opcode == opcode;
  return count;
}

TEST(PassesConstantFoldingTest, FoldsArithmeticChains) {
  auto module = ParseCseModule(R"(HloModule t
ENTRY main {
  a = f32[3] constant({1, 2, 3})
  b = f32[3] constant({10, 20, 30})
  s = f32[3] add(a, b)
  ROOT m = f32[3] multiply(s, s)
})");
  EXPECT_TRUE(RunPass(std::make_unique<ConstantFolding>(), *module));
  const Instruction* root = module->entry()->root();
  ASSERT_EQ(root->opcode, Opcode::kConstant);
  EXPECT_EQ(*root->literal, Literal::FromVector<float>({121, 484, 1089}));
}

TEST(PassesConstantFoldingTest, FoldsReduceThroughItsReducer) {
  auto module = ParseCseModule(R"(HloModule t
add {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] add(x, y)
}
ENTRY main {
  a = s32[2,2] constant({{1, 2}, {3, 4}})
  z = s32[] constant(0)
  ROOT r = s32[2] reduce(a, z), dimensions={1}, to_apply=add
})");
  EXPECT_TRUE(RunPass(std::make_unique<ConstantFolding>(), *module));
  const Instruction* root = module->entry()->root();
  ASSERT_EQ(root->opcode, Opcode::kConstant);
  EXPECT_EQ(*root->literal, Literal::FromVector<int32_t>({3, 7}));
}

TEST(PassesConstantFoldingTest, LeavesBroadcastIotaRngAndParametersAlone) {
  auto module = ParseCseModule(R"(HloModule t
ENTRY main {
  c = f32[] constant(2)
  b = f32[64] broadcast(c), dimensions={}
  i = f32[64] iota(), iota_dimension=0
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r = f32[64] rng(lo, hi), distribution=rng_uniform
  x = f32[64] parameter(0)
  s = f32[64] add(b, i)
  t = f32[64] add(s, r)
  ROOT u = f32[64] add(t, x)
})");
  EXPECT_FALSE(RunPass(std::make_unique<ConstantFolding>(), *module));
  EXPECT_EQ(CountInstructions(*module->entry(), Opcode::kRng), 1);
  EXPECT_EQ(CountInstructions(*module->entry(), Opcode::kBroadcast), 1);
}

TEST(PassesConstantFoldingTest, SkipsResultsOverTheSizeLimit) {
  auto module = ParseCseModule(R"(HloModule t
ENTRY main {
  a = f32[4] constant({1, 2, 3, 4})
  ROOT n = f32[4] negate(a)
})");
  EXPECT_FALSE(RunPass(std::make_unique<ConstantFolding>(/*max_result_bytes=*/8), *module));
  EXPECT_TRUE(RunPass(std::make_unique<ConstantFolding>(/*max_result_bytes=*/16), *module));
}

TEST(PassesCseTest, MergesEqualInstructionsAndTheirUsers) {
  auto module = ParseCseModule(R"(HloModule t
ENTRY main {
  x = f32[4] parameter(0)
  a = f32[4] exponential(x)
  b = f32[4] exponential(x)
  c = f32[4] negate(a)
  d = f32[4] negate(b)
  k1 = f32[] constant(3)
  k2 = f32[] constant(3)
  e = f32[4] broadcast(k1), dimensions={}
  f = f32[4] broadcast(k2), dimensions={}
  g = f32[4] add(c, e)
  h = f32[4] add(d, f)
  ROOT r = f32[4] multiply(g, h)
})");
  EXPECT_TRUE(RunPass(std::make_unique<CommonSubexpressionElimination>(), *module));
  const Instruction* root = module->entry()->root();
  EXPECT_EQ(root->operand(0), root->operand(1));
  EXPECT_EQ(CountInstructions(*module->entry(), Opcode::kExp), 1);
  EXPECT_EQ(CountInstructions(*module->entry(), Opcode::kConstant), 1);
}

TEST(PassesCseTest, KeepsDifferentAttributesAndRandomNumbers) {
  auto module = ParseCseModule(R"(HloModule t
ENTRY main {
  x = f32[2,3] parameter(0)
  a = f32[1,3] slice(f32[2,3] x), slice={[0:1], [0:3]}
  ra = f32[3] reshape(f32[1,3] a)
  b = f32[1,3] slice(x), slice={[1:2], [0:3]}
  rb = f32[3] reshape(b)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r1 = f32[3] rng(lo, hi), distribution=rng_uniform
  r2 = f32[3] rng(lo, hi), distribution=rng_uniform
  s = f32[3] add(ra, rb)
  t = f32[3] add(r1, r2)
  ROOT u = f32[3] add(s, t)
})");
  EXPECT_FALSE(RunPass(std::make_unique<CommonSubexpressionElimination>(), *module));
  EXPECT_EQ(CountInstructions(*module->entry(), Opcode::kRng), 2);
  EXPECT_EQ(CountInstructions(*module->entry(), Opcode::kSlice), 2);
}

TEST(PassesLayoutTest, NormalisesEveryShapeToRowMajor) {
  auto module = ParseCseModule(R"(HloModule t, entry_computation_layout={(f32[2,3]{0,1})->f32[3,2]{0,1}}
ENTRY main {
  x = f32[2,3]{0,1} parameter(0)
  c = f32[3,2]{0,1} constant({{1, 2}, {3, 4}, {5, 6}})
  t = f32[3,2]{0,1} transpose(x), dimensions={1,0}
  ROOT r = f32[3,2]{0,1} add(t, c)
})");
  interpreter::InterpreterBackend backend;
  const std::vector<Literal> arguments = {Literal::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3})};
  KILN_ASSERT_OK_AND_ASSIGN(Literal before, testing::Execute(backend, *module, arguments));
  EXPECT_TRUE(RunPass(std::make_unique<LayoutNormalization>(), *module));
  for (const auto& instruction : module->entry()->instructions()) {
    EXPECT_TRUE(instruction->shape.HasDefaultLayout()) << instruction->ToString();
  }
  EXPECT_TRUE(module->entry_layout()->parameters[0].HasDefaultLayout());
  EXPECT_TRUE(module->entry_layout()->result.HasDefaultLayout());
  KILN_ASSERT_OK_AND_ASSIGN(Literal after, testing::Execute(backend, *module, arguments));
  EXPECT_EQ(after, before);
  LayoutNormalization again;
  KILN_ASSERT_OK_AND_ASSIGN(bool changed, again.Run(*module));
  EXPECT_FALSE(changed);
}

TEST(PassesLayoutTest, DefaultLayoutsForTuples) {
  Shape inner(ElementType::kF32, {2, 3});
  inner.set_layout(Layout{{0, 1}, {}, PaddingValue::kInvalid});
  const Shape normalized = WithDefaultLayouts(Shape::Tuple({inner, Shape::Scalar(ElementType::kS32)}));
  EXPECT_TRUE(normalized.tuple_shapes(0).HasDefaultLayout());
  EXPECT_TRUE(normalized.Compatible(Shape::Tuple({inner, Shape::Scalar(ElementType::kS32)})));
}

// Expansion gives the interpreter's own batch-norm results.
void ExpectExpansionMatches(const std::string& text, const std::vector<Literal>& arguments) {
  auto module = ParseCseModule(text);
  ASSERT_NE(module, nullptr);
  interpreter::InterpreterBackend backend;
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> expected,
                            testing::ExecuteLeaves(backend, *module, arguments));
  EXPECT_TRUE(RunPass(std::make_unique<BatchNormExpander>(), *module));
  for (const auto& instruction : module->entry()->instructions()) {
    EXPECT_NE(instruction->opcode, Opcode::kBatchNormTraining);
    EXPECT_NE(instruction->opcode, Opcode::kBatchNormInference);
    EXPECT_NE(instruction->opcode, Opcode::kBatchNormGrad);
  }
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> actual, testing::ExecuteLeaves(backend, *module, arguments));
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t leaf = 0; leaf < expected.size(); ++leaf) {
    ASSERT_EQ(actual[leaf].element_count(), expected[leaf].element_count());
    for (int64_t i = 0; i < expected[leaf].element_count(); ++i) {
      EXPECT_NEAR(actual[leaf].GetAsDouble(i), expected[leaf].GetAsDouble(i),
                  1e-5 + 1e-5 * std::fabs(expected[leaf].GetAsDouble(i)))
          << "leaf " << leaf << " element " << i;
    }
  }
}

const std::vector<float> kX = {0.5f, -1.0f, 2.0f, 3.5f, 0.25f, -2.0f, 1.0f, 4.0f, -0.5f, 1.5f, 2.5f, -3.0f};

TEST(PassesBatchNormTest, TrainingExpansionMatchesTheInterpreter) {
  ExpectExpansionMatches(
      R"(HloModule t
ENTRY main {
  x = f32[2,3,2] parameter(0)
  s = f32[3] parameter(1)
  o = f32[3] parameter(2)
  ROOT bn = (f32[2,3,2], f32[3], f32[3]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1
})",
      {Literal::FromVector<float>(kX, {2, 3, 2}), Literal::FromVector<float>({1.0f, 2.0f, 0.5f}),
       Literal::FromVector<float>({0.0f, 1.0f, -1.0f})});
}

TEST(PassesBatchNormTest, InferenceExpansionMatchesTheInterpreter) {
  ExpectExpansionMatches(
      R"(HloModule t
ENTRY main {
  x = f32[4,3] parameter(0)
  s = f32[3] parameter(1)
  o = f32[3] parameter(2)
  m = f32[3] parameter(3)
  v = f32[3] parameter(4)
  ROOT bn = f32[4,3] batch-norm-inference(x, s, o, m, v), epsilon=0.01, feature_index=1
})",
      {Literal::FromVector<float>(kX, {4, 3}), Literal::FromVector<float>({1.0f, 2.0f, 0.5f}),
       Literal::FromVector<float>({0.0f, 1.0f, -1.0f}), Literal::FromVector<float>({0.1f, 0.2f, 0.3f}),
       Literal::FromVector<float>({1.0f, 0.5f, 2.0f})});
}

TEST(PassesBatchNormTest, GradExpansionMatchesTheInterpreter) {
  std::vector<float> dy(kX.rbegin(), kX.rend());
  ExpectExpansionMatches(
      R"(HloModule t
ENTRY main {
  x = f32[3,4] parameter(0)
  s = f32[3] parameter(1)
  m = f32[3] parameter(2)
  v = f32[3] parameter(3)
  dy = f32[3,4] parameter(4)
  ROOT bn = (f32[3,4], f32[3], f32[3]) batch-norm-grad(x, s, m, v, dy), epsilon=0.001, feature_index=0
})",
      {Literal::FromVector<float>(kX, {3, 4}), Literal::FromVector<float>({1.0f, 2.0f, 0.5f}),
       Literal::FromVector<float>({0.1f, 0.2f, 0.3f}), Literal::FromVector<float>({1.0f, 0.5f, 2.0f}),
       Literal::FromVector<float>(dy, {3, 4})});
}

}  // namespace
}  // namespace kiln
