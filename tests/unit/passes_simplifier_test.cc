// Algebraic simplifier: one test per rule, plus the float cases that must
// stay untouched because the rewrite would not be exact.
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/pass.h"
#include "core/passes/algebraic_simplifier.h"
#include "core/passes/shape_op_simplifier.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

constexpr char kAddReducer[] =
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n";

// Parses ENTRY `body` (with `callees` computations first), runs the simplifier
// and DCE under the verifier, and returns the simplified module.
std::unique_ptr<Module> Simplify(const std::string& body, const std::string& callees = "") {
  auto module = ParseHloModule("HloModule test\n" + callees + "ENTRY main {\n" + body + "}\n");
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return nullptr;
  PassPipeline pipeline;
  pipeline.AddPass(std::make_unique<AlgebraicSimplifier>());
  pipeline.AddPass(std::make_unique<DeadCodeElimination>());
  auto changed = pipeline.Run(**module);
  EXPECT_TRUE(changed.ok()) << changed.status().ToString();
  return std::move(module).value();
}

// The root's name after simplification: a rule that fires replaces the root.
std::string RootName(const std::string& body, const std::string& callees = "") {
  auto module = Simplify(body, callees);
  return module ? module->entry()->root()->name : "";
}

Opcode RootOpcode(const std::string& body) {
  auto module = Simplify(body);
  return module ? module->entry()->root()->opcode : Opcode::kOpcodeCount;
}

TEST(PassesSimplifierTest, RuleTableNamesAreUnique) {
  std::set<std::string_view> names;
  for (const SimplificationRule& rule : AlgebraicSimplificationRules()) {
    EXPECT_TRUE(names.insert(rule.name).second) << rule.name;
    EXPECT_NE(rule.rewrite, nullptr);
  }
  EXPECT_GE(names.size(), 20u);
}

TEST(PassesSimplifierTest, AddIntegerZero) {
  EXPECT_EQ(
      RootName(
          "  x = s32[4] parameter(0)\n  z = s32[] constant(0)\n  b = s32[4] broadcast(z), dimensions={}\n"
          "  ROOT r = s32[4] add(b, x)\n"),
      "x");
}

TEST(PassesSimplifierTest, AddFloatPositiveZeroIsKept) {
  // -0.0 + 0.0 is +0.0, so x + 0.0 is not x.
  EXPECT_EQ(
      RootName(
          "  x = f32[4] parameter(0)\n  z = f32[4] constant({0, 0, 0, 0})\n  ROOT r = f32[4] add(x, z)\n"),
      "r");
}

TEST(PassesSimplifierTest, AddFloatNegativeZero) {
  EXPECT_EQ(
      RootName(
          "  x = f32[4] parameter(0)\n  z = f32[] constant(-0)\n  b = f32[4] broadcast(z), dimensions={}\n"
          "  ROOT r = f32[4] add(x, b)\n"),
      "x");
}

TEST(PassesSimplifierTest, SubtractZero) {
  EXPECT_EQ(
      RootName(
          "  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n  b = f32[4] broadcast(z), dimensions={}\n"
          "  ROOT r = f32[4] subtract(x, b)\n"),
      "x");
  // 0 - x is not x.
  EXPECT_EQ(
      RootName(
          "  x = s32[4] parameter(0)\n  z = s32[] constant(0)\n  b = s32[4] broadcast(z), dimensions={}\n"
          "  ROOT r = s32[4] subtract(b, x)\n"),
      "r");
}

TEST(PassesSimplifierTest, SubtractSelfOnlyForIntegers) {
  auto module = Simplify("  x = s32[3] parameter(0)\n  ROOT r = s32[3] subtract(x, x)\n");
  const Instruction* root = module->entry()->root();
  ASSERT_EQ(root->opcode, Opcode::kBroadcast);
  EXPECT_EQ(root->operand(0)->literal->GetAsInt64(0), 0);
  EXPECT_EQ(RootName("  x = f32[3] parameter(0)\n  ROOT r = f32[3] subtract(x, x)\n"), "r");
}

TEST(PassesSimplifierTest, MultiplyOne) {
  EXPECT_EQ(
      RootName(
          "  x = f32[2] parameter(0)\n  o = f32[2] constant({1, 1})\n  ROOT r = f32[2] multiply(o, x)\n"),
      "x");
  EXPECT_EQ(
      RootName("  x = u8[2] parameter(0)\n  o = u8[2] constant({1, 1})\n  ROOT r = u8[2] multiply(x, o)\n"),
      "x");
}

TEST(PassesSimplifierTest, MultiplyZeroOnlyForIntegers) {
  EXPECT_EQ(
      RootOpcode(
          "  x = s32[2] parameter(0)\n  z = s32[2] constant({0, 0})\n  ROOT r = s32[2] multiply(x, z)\n"),
      Opcode::kBroadcast);
  // NaN * 0 and inf * 0 are NaN.
  EXPECT_EQ(
      RootName(
          "  x = f32[2] parameter(0)\n  z = f32[2] constant({0, 0})\n  ROOT r = f32[2] multiply(x, z)\n"),
      "r");
}

TEST(PassesSimplifierTest, DivideOne) {
  EXPECT_EQ(
      RootName(
          "  x = f32[2] parameter(0)\n  o = f32[] constant(1)\n  b = f32[2] broadcast(o), dimensions={}\n"
          "  ROOT r = f32[2] divide(x, b)\n"),
      "x");
}

TEST(PassesSimplifierTest, NegateNegateAndNotNot) {
  EXPECT_EQ(RootName("  x = f32[2] parameter(0)\n  n = f32[2] negate(x)\n  ROOT r = f32[2] negate(n)\n"),
            "x");
  EXPECT_EQ(RootName("  x = pred[2] parameter(0)\n  n = pred[2] not(x)\n  ROOT r = pred[2] not(n)\n"), "x");
}

TEST(PassesSimplifierTest, SelectWithConstantPredicate) {
  const std::string operands = "  x = f32[2] parameter(0)\n  y = f32[2] parameter(1)\n";
  EXPECT_EQ(RootName(operands + "  p = pred[] constant(true)\n  b = pred[2] broadcast(p), dimensions={}\n"
                                "  ROOT r = f32[2] select(b, x, y)\n"),
            "x");
  EXPECT_EQ(
      RootName(operands + "  p = pred[2] constant({false, false})\n  ROOT r = f32[2] select(p, x, y)\n"),
      "y");
  EXPECT_EQ(RootName(operands + "  p = pred[2] constant({true, false})\n  ROOT r = f32[2] select(p, x, y)\n"),
            "r");
}

TEST(PassesSimplifierTest, UniformConstantBecomesScalarBroadcast) {
  auto module = Simplify("  ROOT c = f32[2,3] constant({{7, 7, 7}, {7, 7, 7}})\n");
  const Instruction* root = module->entry()->root();
  ASSERT_EQ(root->opcode, Opcode::kBroadcast);
  EXPECT_TRUE(root->operand(0)->shape.IsScalar());
  EXPECT_EQ(root->operand(0)->literal->GetAsDouble(0), 7.0);
  EXPECT_EQ(RootOpcode("  ROOT c = f32[2] constant({7, 8})\n"), Opcode::kConstant);
}

TEST(PassesSimplifierTest, BroadcastOfBroadcastMerges) {
  auto module = Simplify(
      "  x = f32[3] parameter(0)\n  a = f32[2,3] broadcast(x), dimensions={1}\n"
      "  ROOT r = f32[4,2,3] broadcast(a), dimensions={1,2}\n");
  const Instruction* root = module->entry()->root();
  ASSERT_EQ(root->opcode, Opcode::kBroadcast);
  EXPECT_EQ(root->operand(0)->name, "x");
  EXPECT_EQ(root->attrs.dimensions, std::vector<int64_t>({2}));
}

TEST(PassesSimplifierTest, IdentityBroadcastTransposeReshapeDisappear) {
  EXPECT_EQ(RootName("  x = f32[2,3] parameter(0)\n  ROOT r = f32[2,3] broadcast(x), dimensions={0,1}\n"),
            "x");
  EXPECT_EQ(RootName("  x = f32[2,3] parameter(0)\n  ROOT r = f32[2,3] transpose(x), dimensions={0,1}\n"),
            "x");
  EXPECT_EQ(RootName("  x = f32[2,3] parameter(0)\n  ROOT r = f32[2,3] reshape(x)\n"), "x");
}

TEST(PassesSimplifierTest, ConcatenateOfOneOperand) {
  EXPECT_EQ(RootName("  x = f32[2,3] parameter(0)\n  ROOT r = f32[2,3] concatenate(x), dimensions={1}\n"),
            "x");
}

TEST(PassesSimplifierTest, SliceOfFullRange) {
  EXPECT_EQ(RootName("  x = f32[2,3] parameter(0)\n  ROOT r = f32[2,3] slice(x), slice={[0:2], [0:3]}\n"),
            "x");
  EXPECT_EQ(RootName("  x = f32[2,3] parameter(0)\n  ROOT r = f32[2,2] slice(x), slice={[0:2], [1:3]}\n"),
            "r");
}

TEST(PassesSimplifierTest, PadWithNoPadding) {
  EXPECT_EQ(RootName("  x = f32[2,3] parameter(0)\n  z = f32[] constant(0)\n"
                     "  ROOT r = f32[2,3] pad(x, z), padding=0_0x0_0\n"),
            "x");
  EXPECT_EQ(RootName("  x = f32[2,3] parameter(0)\n  z = f32[] constant(0)\n"
                     "  ROOT r = f32[2,4] pad(x, z), padding=0_0x0_1\n"),
            "r");
}

TEST(PassesSimplifierTest, ReduceOverNoDimensionsWithIdentityInit) {
  EXPECT_EQ(RootName("  x = f32[2,3] parameter(0)\n  z = f32[] constant(-0)\n"
                     "  ROOT r = f32[2,3] reduce(x, z), dimensions={}, to_apply=add\n",
                     kAddReducer),
            "x");
  // init 1 is not the identity of add: every element gets 1 added.
  EXPECT_EQ(RootName("  x = f32[2,3] parameter(0)\n  z = f32[] constant(1)\n"
                     "  ROOT r = f32[2,3] reduce(x, z), dimensions={}, to_apply=add\n",
                     kAddReducer),
            "r");
}

TEST(PassesSimplifierTest, ConvertToTheSameType) {
  EXPECT_EQ(RootName("  x = f32[2] parameter(0)\n  ROOT r = f32[2] convert(x)\n"), "x");
  EXPECT_EQ(RootName("  x = f32[2] parameter(0)\n  ROOT r = s32[2] convert(x)\n"), "r");
}

TEST(PassesSimplifierTest, CopyElimination) {
  EXPECT_EQ(RootName("  x = f32[2,3] parameter(0)\n  ROOT r = f32[2,3]{0,1} copy(x)\n"), "x");
}

TEST(PassesSimplifierTest, TransposeOfTranspose) {
  EXPECT_EQ(RootName("  x = f32[2,3] parameter(0)\n  t = f32[3,2] transpose(x), dimensions={1,0}\n"
                     "  ROOT r = f32[2,3] transpose(t), dimensions={1,0}\n"),
            "x");
  auto module = Simplify(
      "  x = f32[2,3,4] parameter(0)\n  t = f32[3,4,2] transpose(x), dimensions={1,2,0}\n"
      "  ROOT r = f32[4,3,2] transpose(t), dimensions={1,0,2}\n");
  const Instruction* root = module->entry()->root();
  ASSERT_EQ(root->opcode, Opcode::kTranspose);
  EXPECT_EQ(root->operand(0)->name, "x");
  EXPECT_EQ(root->attrs.dimensions, std::vector<int64_t>({2, 1, 0}));
}

TEST(PassesSimplifierTest, ReshapeOfReshape) {
  auto module =
      Simplify("  x = f32[2,3] parameter(0)\n  a = f32[6] reshape(x)\n  ROOT r = f32[3,2] reshape(a)\n");
  const Instruction* root = module->entry()->root();
  ASSERT_EQ(root->opcode, Opcode::kReshape);
  EXPECT_EQ(root->operand(0)->name, "x");
  EXPECT_EQ(
      RootName("  x = f32[2,3] parameter(0)\n  a = f32[6] reshape(x)\n  ROOT r = f32[2,3] reshape(a)\n"),
      "x");
}

TEST(PassesSimplifierTest, TupleElementOfTuple) {
  EXPECT_EQ(
      RootName("  x = f32[2] parameter(0)\n  y = s32[] parameter(1)\n  t = (f32[2], s32[]) tuple(x, y)\n"
               "  ROOT r = s32[] get-tuple-element(t), index=1\n"),
      "y");
}

TEST(PassesSimplifierTest, MaximumWithMinusInfinityAndMinimumWithInfinity) {
  EXPECT_EQ(
      RootName(
          "  x = f32[2] parameter(0)\n  c = f32[] constant(-inf)\n  b = f32[2] broadcast(c), dimensions={}\n"
          "  ROOT r = f32[2] maximum(x, b)\n"),
      "x");
  EXPECT_EQ(
      RootName(
          "  x = f32[2] parameter(0)\n  c = f32[] constant(inf)\n  b = f32[2] broadcast(c), dimensions={}\n"
          "  ROOT r = f32[2] minimum(b, x)\n"),
      "x");
}

TEST(PassesSimplifierTest, ReportsUnchangedModule) {
  auto module = ParseHloModule(
      "HloModule t\nENTRY main {\n  x = f32[2] parameter(0)\n  ROOT r = f32[2] exponential(x)\n}\n");
  ASSERT_TRUE(module.ok());
  AlgebraicSimplifier simplifier;
  KILN_ASSERT_OK_AND_ASSIGN(bool changed, simplifier.Run(**module));
  EXPECT_FALSE(changed);
}

TEST(PassesShapeOpSimplifierTest, MovesOfScalarBroadcastsBecomeBroadcasts) {
  auto module = ParseHloModule(
      "HloModule t\nENTRY main {\n  c = f32[] parameter(0)\n  b = f32[2,3] broadcast(c), dimensions={}\n"
      "  t = f32[3,2] transpose(b), dimensions={1,0}\n  ROOT r = f32[6] reshape(t)\n}\n");
  ASSERT_TRUE(module.ok());
  PassPipeline pipeline;
  pipeline.AddPass(std::make_unique<ShapeOpSimplifier>());
  pipeline.AddPass(std::make_unique<DeadCodeElimination>());
  KILN_ASSERT_OK(pipeline.Run(**module).status());
  const Instruction* root = (*module)->entry()->root();
  ASSERT_EQ(root->opcode, Opcode::kBroadcast);
  EXPECT_EQ(root->operand(0)->name, "c");
  EXPECT_EQ(root->shape.dimensions(), std::vector<int64_t>({6}));
}

TEST(PassesShapeOpSimplifierTest, ElementwiseOfScalarBroadcastsRunsOnTheScalar) {
  auto module = ParseHloModule(
      "HloModule t\nENTRY main {\n  c = f32[] parameter(0)\n  b = f32[2,3] broadcast(c), dimensions={}\n"
      "  ROOT r = f32[2,3] exponential(b)\n}\n");
  ASSERT_TRUE(module.ok());
  ShapeOpSimplifier pass;
  KILN_ASSERT_OK_AND_ASSIGN(bool changed, pass.Run(**module));
  EXPECT_TRUE(changed);
  const Instruction* root = (*module)->entry()->root();
  ASSERT_EQ(root->opcode, Opcode::kBroadcast);
  EXPECT_EQ(root->operand(0)->opcode, Opcode::kExp);
  EXPECT_TRUE(root->operand(0)->shape.IsScalar());
}

TEST(PassesShapeOpSimplifierTest, TransposeOfUnitDimensionsBecomesReshape) {
  auto module = ParseHloModule(
      "HloModule t\nENTRY main {\n  x = f32[1,4,1,3] parameter(0)\n"
      "  ROOT r = f32[4,1,3,1] transpose(x), dimensions={1,0,3,2}\n}\n");
  ASSERT_TRUE(module.ok());
  ShapeOpSimplifier pass;
  KILN_ASSERT_OK_AND_ASSIGN(bool changed, pass.Run(**module));
  EXPECT_TRUE(changed);
  EXPECT_EQ((*module)->entry()->root()->opcode, Opcode::kReshape);
  // A real transpose stays.
  auto real = ParseHloModule(
      "HloModule t\nENTRY main {\n  x = f32[2,3] parameter(0)\n  ROOT r = f32[3,2] transpose(x), "
      "dimensions={1,0}\n}\n");
  ASSERT_TRUE(real.ok());
  KILN_ASSERT_OK_AND_ASSIGN(bool real_changed, pass.Run(**real));
  EXPECT_FALSE(real_changed);
}

}  // namespace
}  // namespace kiln
