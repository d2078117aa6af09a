// Compile work grows linearly with program size. For each shape of program
// (the ones benchmarks/compile_time times), the same program at two sizes ten
// times apart is parsed, optimised by the whole pipeline (fusion included) and
// printed, counting the instructions that whole-computation walks visit
// (core/work_count.h). A pass that walks the computation once per rewrite
// (ReplaceAllUsesWith per simplified instruction, a verifier that re-lists a
// computation's callees per call, fusion copying a ladder of values into
// every group) makes the count grow a hundredfold instead of tenfold. No
// time is measured.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/hlo_printer.h"
#include "core/passes/pipeline.h"
#include "core/work_count.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

constexpr char kVector[] = "f32[16]";

std::string Line(const std::string& text) { return "  " + text + "\n"; }
std::string Name(const char* prefix, int64_t i) { return prefix + std::to_string(i); }
std::string Vector(const std::string& name, const std::string& op) {
  return Line(name + " = " + kVector + " " + op);
}

// x -> -x, n times: the simplifier removes every pair.
std::string NegateChain(int64_t n) {
  std::string text = "HloModule negate_chain\nENTRY main {\n" + Vector("x0", "parameter(0)");
  for (int64_t i = 1; i < n; ++i) text += Vector(Name("x", i), "negate(" + Name("x", i - 1) + ")");
  return text + Line("ROOT r = " + std::string(kVector) + " negate(" + Name("x", n - 1) + ")") + "}\n";
}

// A chain of adds that all read one value: it has n users.
std::string SharedOperand(int64_t n) {
  std::string text = "HloModule shared_operand\nENTRY main {\n" + Vector("a0", "parameter(0)") +
                     Vector("s", "exponential(a0)");
  for (int64_t i = 1; i < n; ++i) text += Vector(Name("a", i), "add(" + Name("a", i - 1) + ", s)");
  return text + Line("ROOT r = " + std::string(kVector) + " add(" + Name("a", n - 1) + ", s)") + "}\n";
}

// n/4 independent multiplies by distinct constants, joined by a balanced tree of maximum.
std::string Wide(int64_t n) {
  std::string text = "HloModule wide\nENTRY main {\n" + Vector("p", "parameter(0)");
  std::vector<std::string> level;
  for (int64_t i = 0; i < n / 4; ++i) {
    text += Line(Name("c", i) + " = f32[] constant(" + std::to_string(i + 1) + ")");
    text += Vector(Name("b", i), "broadcast(" + Name("c", i) + "), dimensions={}");
    text += Vector(Name("m", i), "multiply(p, " + Name("b", i) + ")");
    level.push_back(Name("m", i));
  }
  int64_t node = 0;
  while (level.size() > 1) {
    std::vector<std::string> joined;
    for (size_t j = 0; j + 1 < level.size(); j += 2) {
      joined.push_back(Name("t", node++));
      text += Vector(joined.back(), "maximum(" + level[j] + ", " + level[j + 1] + ")");
    }
    if (level.size() % 2 == 1) joined.push_back(level.back());
    level = std::move(joined);
  }
  return text + Line("ROOT r = " + std::string(kVector) + " negate(" + level[0] + ")") + "}\n";
}

// A ladder through nested tuples: x' = x + y, y' = x * y, each step through
// tuple and get-tuple-element, so every value is read twice.
std::string Tuples(int64_t n) {
  const std::string inner = "(f32[16], f32[16])";
  const std::string outer = "(f32[16], " + inner + ")";
  std::string text =
      "HloModule tuples\nENTRY main {\n" + Vector("x0", "parameter(0)") + Vector("y0", "negate(x0)");
  const int64_t steps = n / 7;
  for (int64_t i = 0; i < steps; ++i) {
    const std::string x = Name("x", i), y = Name("y", i), t = Name("t", i), g = Name("g", i);
    text += Line(Name("i", i) + " = " + inner + " tuple(" + y + ", " + x + ")");
    text += Line(t + " = " + outer + " tuple(" + x + ", " + Name("i", i) + ")");
    text += Line(g + " = " + inner + " get-tuple-element(" + t + "), index=1");
    text += Vector(Name("u", i), "get-tuple-element(" + g + "), index=0");
    text += Vector(Name("v", i), "get-tuple-element(" + t + "), index=0");
    text += Vector(Name("x", i + 1), "add(" + Name("u", i) + ", " + Name("v", i) + ")");
    text += Vector(Name("y", i + 1), "multiply(" + Name("u", i) + ", " + Name("v", i) + ")");
  }
  return text + Line("ROOT r = " + inner + " tuple(" + Name("x", steps) + ", " + Name("y", steps) + ")") +
         "}\n";
}

// A while loop whose body is a chain of n adds and multiplies.
std::string WhileBody(int64_t n) {
  const std::string state = "(s32[], f32[16])";
  std::string text = "HloModule while_body\n";
  text += "condition {\n" + Line("s = " + state + " parameter(0)") +
          Line("i = s32[] get-tuple-element(s), index=0") + Line("limit = s32[] constant(4)") +
          Line("ROOT lt = pred[] compare(i, limit), direction=LT") + "}\n";
  text += "body {\n" + Line("s = " + state + " parameter(0)") +
          Line("i = s32[] get-tuple-element(s), index=0") + Line("one = s32[] constant(1)") +
          Line("next = s32[] add(i, one)") + Vector("x0", "get-tuple-element(s), index=1") +
          Line("c1 = f32[] constant(1)") + Vector("b1", "broadcast(c1), dimensions={}") +
          Line("half = f32[] constant(0.5)") + Vector("bhalf", "broadcast(half), dimensions={}");
  for (int64_t i = 1; i <= n; ++i) {
    text += Vector(Name("x", i), std::string(i % 2 ? "add(" : "multiply(") + Name("x", i - 1) +
                                     (i % 2 ? ", b1)" : ", bhalf)"));
  }
  text += Line("ROOT result = " + state + " tuple(next, " + Name("x", n) + ")") + "}\n";
  return text + "ENTRY main {\n" + Vector("p", "parameter(0)") + Line("zero = s32[] constant(0)") +
         Line("init = " + state + " tuple(zero, p)") +
         Line("loop = " + state + " while(init), condition=condition, body=body") +
         Line("ROOT out = " + std::string(kVector) + " get-tuple-element(loop), index=1") + "}\n";
}

// n/5 small computations, each called once in a chain (the inliner inlines them all).
std::string ManyComputations(int64_t n) {
  std::string text = "HloModule many_computations\n";
  const int64_t calls = n / 5;
  for (int64_t i = 0; i < calls; ++i) {
    text += Name("f", i) + " {\n" + Vector("x", "parameter(0)") +
            Line("c = f32[] constant(" + std::to_string(i % 7 + 1) + ")") +
            Vector("b", "broadcast(c), dimensions={}") +
            Line("ROOT r = " + std::string(kVector) + " add(x, b)") + "}\n";
  }
  text += "ENTRY main {\n" + Vector("x0", "parameter(0)");
  for (int64_t i = 0; i < calls; ++i) {
    text += Line(std::string(i + 1 == calls ? "ROOT " : "") + Name("x", i + 1) + " = " + kVector + " call(" +
                 Name("x", i) + "), to_apply=" + Name("f", i));
  }
  return text + "}\n";
}

// The instructions walked to parse, optimise and print `text`.
uint64_t WorkToCompile(const std::string& text) {
  const uint64_t before = InstructionsWalked();
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return 0;
  const Status optimised = RunOptimizationPipeline(**module);
  EXPECT_TRUE(optimised.ok()) << optimised.ToString();
  EXPECT_FALSE(PrintModule(**module).empty());
  return InstructionsWalked() - before;
}

struct ProgramKind {
  const char* name;
  std::string (*program)(int64_t);
  friend void PrintTo(const ProgramKind& kind, std::ostream* out) { *out << kind.name; }
};

class CompileScalingTest : public ::testing::TestWithParam<ProgramKind> {};

TEST_P(CompileScalingTest, WorkGrowsLinearlyWithProgramSize) {
  constexpr int64_t kSmall = 1000, kLarge = 10000;
  const uint64_t small = WorkToCompile(GetParam().program(kSmall));
  const uint64_t large = WorkToCompile(GetParam().program(kLarge));
  ASSERT_GT(small, static_cast<uint64_t>(kSmall));  // the walks were counted at all
  // Linear work grows tenfold (a little less: fixed costs); the bound leaves
  // room for n log n, while quadratic work grows a hundredfold.
  EXPECT_LE(large, 15 * small) << GetParam().name << ": " << small << " instructions walked at " << kSmall
                               << ", " << large << " at " << kLarge;
}

// The kernels fusion makes of the tuples ladder. Groups stop at their size
// bound; the values at each boundary are materialised once, so the count
// grows with the ladder's length. (It once grew with its square: every
// group below a boundary recomputed part of it, cutting the next groups
// into more and more one-instruction kernels.)
int64_t FusionKernels(int64_t n) {
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(Tuples(n));
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return 0;
  EXPECT_TRUE(RunOptimizationPipeline(**module).ok());
  int64_t kernels = 0;
  for (const auto& instruction : (*module)->entry()->instructions()) {
    kernels += instruction->opcode == Opcode::kFusion ? 1 : 0;
  }
  return kernels;
}

TEST(CompileScalingTest, LadderFusesIntoLinearlyManyKernels) {
  const int64_t small = FusionKernels(4000);
  const int64_t large = FusionKernels(40000);
  ASSERT_GT(small, 0);
  EXPECT_LE(large, 15 * small) << small << " kernels at 4000 instructions, " << large << " at 40000";
}

// Dead-code removal looks at each instruction once: one marking walk from
// the root and the side effects. (It took a post-order of the root first,
// then walked again from the side effects: two walks, two hash sets, on every
// call, and the passes call it many times.)
TEST(CompileScalingTest, DeadCodeRemovalWalksTheComputationOnce) {
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(WhileBody(1000));
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  for (const auto& computation : (*module)->computations()) {
    const uint64_t size = computation->instructions().size();
    const uint64_t before = InstructionsWalked();
    EXPECT_FALSE(computation->RemoveDeadInstructions()) << computation->name();  // nothing is dead
    EXPECT_EQ(InstructionsWalked() - before, size) << computation->name();
  }
}

// The pipeline re-infers each shape once, at its end: as many shape checks as
// the optimised module has instructions. (It re-inferred every shape after
// each pass that changed the module, the inliner, common-subexpression
// elimination and fusion here: 1033 shape checks for the 217 instructions
// left.)
TEST(CompileScalingTest, TheOptimisationPipelineInfersEachShapeOnce) {
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(ManyComputations(1000));
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  PipelineOptions options;
  options.verify_input = false;  // the parser verified it
  const uint64_t before = ShapesVerified();
  ASSERT_TRUE(RunOptimizationPipeline(**module, options).ok());
  const uint64_t verified = ShapesVerified() - before;
  uint64_t instructions = 0;
  for (const auto& computation : (*module)->computations())
    instructions += computation->instructions().size();
  EXPECT_EQ(verified, instructions);
}

// A backend, having verified its input in full, asks for the check of the
// optimised module only in a debug build (VerifyOptimisedModules): without
// it no shape is inferred again, and the structure is still checked after
// each pass.
TEST(CompileScalingTest, WithoutTheOutputCheckThePipelineInfersNoShape) {
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(ManyComputations(1000));
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  PipelineOptions options;
  options.verify_input = false;
  options.verify_output = false;
  const uint64_t shapes_before = ShapesVerified();
  const uint64_t walked_before = InstructionsWalked();
  ASSERT_TRUE(RunOptimizationPipeline(**module, options).ok());
  EXPECT_EQ(ShapesVerified(), shapes_before);
  EXPECT_GT(InstructionsWalked(), walked_before);  // the passes and the structural checks walked it
}

INSTANTIATE_TEST_SUITE_P(Shapes, CompileScalingTest,
                         ::testing::Values(ProgramKind{"negate_chain", NegateChain},
                                           ProgramKind{"shared_operand", SharedOperand},
                                           ProgramKind{"wide", Wide}, ProgramKind{"tuples", Tuples},
                                           ProgramKind{"while_body", WhileBody},
                                           ProgramKind{"many_computations", ManyComputations}),
                         [](const ::testing::TestParamInfo<ProgramKind>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace kiln
