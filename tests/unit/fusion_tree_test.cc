// Fusion of wide trees: a group descends one branch at a time, so the values
// it reads stay as few as the tree is deep and its kernels fill up to the
// size bound. Taken a level at a time, a group's inputs doubled per level
// until the input bound stopped it six levels down, and the levels below
// became a kernel per few leaves (the `wide` program of
// benchmarks/compile_time: 4161 kernels of 8 to 32 instructions at 100k
// instructions).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/passes/fusion.h"
#include "core/passes/pipeline.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

// `leaves` products of one parameter with distinct constants (CSE would
// merge equal ones), joined by a balanced tree of maximum: the leaves first,
// then the tree a level at a time, as benchmarks/compile_time and JAX write
// it.
std::string ScaledParameterTree(int leaves) {
  std::string text = "HloModule wide_tree\nENTRY main {\n  p = f32[16] parameter(0)\n";
  std::vector<std::string> level;
  for (int i = 0; i < leaves; ++i) {
    const std::string n = std::to_string(i);
    text += "  c" + n + " = f32[] constant(" + std::to_string(i + 2) + ")\n";
    text += "  b" + n + " = f32[16] broadcast(c" + n + "), dimensions={}\n";
    text += "  m" + n + " = f32[16] multiply(p, b" + n + ")\n";
    level.push_back("m" + n);
  }
  for (int node = 0; level.size() > 1;) {
    std::vector<std::string> joined;
    for (size_t j = 0; j + 1 < level.size(); j += 2) {
      joined.push_back("t" + std::to_string(node++));
      text += "  " + joined.back() + " = f32[16] maximum(" + level[j] + ", " + level[j + 1] + ")\n";
    }
    if (level.size() % 2 == 1) joined.push_back(level.back());
    level = std::move(joined);
  }
  return text + "  ROOT r = f32[16] negate(" + level[0] + ")\n}\n";
}

Literal Ramp16() {
  std::vector<float> values;
  for (int i = 0; i < 16; ++i) values.push_back(0.25f * static_cast<float>(i) - 2.0f);
  return Literal::FromVector<float>(values, {16});
}

TEST(FusionTreeTest, AWideTreeFillsKernelsUpToTheSizeBound) {
  // 1000 leaves: 4000 instructions (every leaf a constant, a broadcast and
  // a multiply, and 999 maximum), 16 levels' worth of groups by level.
  constexpr int kLeaves = 1000;
  auto module = testing::ParseHloOrFail(ScaledParameterTree(kLeaves));
  ASSERT_NE(module, nullptr);
  const size_t instructions = module->entry()->instructions().size();
  std::unique_ptr<Module> optimised = module->Clone();
  Status status = RunOptimizationPipeline(*optimised);
  ASSERT_TRUE(status.ok()) << status.ToString();
  const std::vector<Literal> arguments = {Ramp16()};
  testing::ExpectSameResults(*module, *optimised, arguments);

  const FusionOptions bounds;
  size_t fusions = 0;
  for (const auto& instruction : optimised->entry()->instructions()) {
    const Opcode op = instruction->opcode;
    // A group that reaches its size bound between a broadcast and its
    // constant reads the constant as a value.
    EXPECT_TRUE(op == Opcode::kParameter || op == Opcode::kConstant || op == Opcode::kFusion)
        << instruction->ToString();
    if (op != Opcode::kFusion) continue;
    ++fusions;
    EXPECT_LE(static_cast<int64_t>(instruction->operands.size()), bounds.max_fusion_inputs);
    const Computation& fused = *instruction->called[0];
    EXPECT_LE(static_cast<int64_t>(fused.instructions().size() - fused.parameters().size()),
              bounds.max_fusion_size);
  }
  // Kernels of 128 instructions on average or more: by levels, 65 kernels
  // (4000 / 65 = 62 on average); at the size bound, 4000 / 256 = 16.
  EXPECT_LE(fusions, instructions / 128) << fusions << " kernels for " << instructions << " instructions";
}

TEST(FusionTreeTest, AWideTreeOverManyParametersStaysWithinTheInputBound) {
  // Every leaf its own parameter: a kernel of the whole tree would read them
  // all, so the input bound splits it, whichever order the group grows in.
  constexpr int kLeaves = 300;
  std::string text = "HloModule tree\nENTRY main {\n";
  std::vector<std::string> level;
  std::vector<Literal> arguments;
  for (int i = 0; i < kLeaves; ++i) {
    level.push_back("p" + std::to_string(i));
    text += "  " + level.back() + " = f32[16] parameter(" + std::to_string(i) + ")\n";
    std::vector<float> values(16, static_cast<float>((i * 37) % 101) - 50.0f);
    arguments.push_back(Literal::FromVector<float>(values, {16}));
  }
  for (int node = 0; level.size() > 1;) {
    std::vector<std::string> joined;
    for (size_t j = 0; j + 1 < level.size(); j += 2) {
      joined.push_back("t" + std::to_string(node++));
      text += "  " + joined.back() + " = f32[16] maximum(" + level[j] + ", " + level[j + 1] + ")\n";
    }
    if (level.size() % 2 == 1) joined.push_back(level.back());
    level = std::move(joined);
  }
  text += "  ROOT r = f32[16] negate(" + level[0] + ")\n}\n";
  auto module = testing::ParseHloOrFail(text);
  ASSERT_NE(module, nullptr);
  std::unique_ptr<Module> optimised = module->Clone();
  Status status = RunOptimizationPipeline(*optimised);
  ASSERT_TRUE(status.ok()) << status.ToString();
  testing::ExpectSameResults(*module, *optimised, arguments);
  size_t fusions = 0;
  for (const auto& instruction : optimised->entry()->instructions()) {
    if (instruction->opcode != Opcode::kFusion) continue;
    ++fusions;
    EXPECT_LE(static_cast<int64_t>(instruction->operands.size()), FusionOptions().max_fusion_inputs);
  }
  // 300 parameters, at most 64 read per kernel: at least five kernels, and
  // no more than a kernel per 32 parameters' worth of tree.
  EXPECT_GE(fusions, 5u);
  EXPECT_LE(fusions, static_cast<size_t>(kLeaves / 32));
}

}  // namespace
}  // namespace kiln
