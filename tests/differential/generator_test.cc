// Self-checks of the random graph generator and of the leaf comparison the
// differential test relies on.
#include <cmath>
#include <limits>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "core/hlo_printer.h"
#include "core/verifier.h"
#include "tests/differential/graph_generator.h"
#include "tests/differential/leaf_compare.h"
#include "tests/unit/test_util.h"

namespace kiln::differential {
namespace {

constexpr uint64_t kSeeds = 22;

// The ops each family exists to test; every graph of the family has one.
std::set<Opcode> FamilyOpcodes(OpFamily family) {
  switch (family) {
    case OpFamily::kElementwise:
      return {Opcode::kAdd,
              Opcode::kSubtract,
              Opcode::kMultiply,
              Opcode::kDivide,
              Opcode::kRemainder,
              Opcode::kMaximum,
              Opcode::kMinimum,
              Opcode::kPower,
              Opcode::kAtan2,
              Opcode::kAnd,
              Opcode::kOr,
              Opcode::kXor,
              Opcode::kShiftLeft,
              Opcode::kShiftRightArithmetic,
              Opcode::kShiftRightLogical};
    case OpFamily::kCompareSelect: return {Opcode::kCompare};
    case OpFamily::kConvert: return {Opcode::kConvert};
    case OpFamily::kShape: return {Opcode::kTranspose};
    case OpFamily::kDynamicSlice: return {Opcode::kDynamicSlice};
    case OpFamily::kReduce: return {Opcode::kReduce};
    case OpFamily::kReduceWindow: return {Opcode::kReduceWindow};
    case OpFamily::kDot: return {Opcode::kDot};
    case OpFamily::kConvolution: return {Opcode::kConvolution};
    case OpFamily::kGatherScatter: return {Opcode::kGather};
    case OpFamily::kSort: return {Opcode::kSort};
    case OpFamily::kWhile: return {Opcode::kWhile};
    case OpFamily::kConditional: return {Opcode::kConditional};
    case OpFamily::kMixed: return {};
    case OpFamily::kComplex:
      return {Opcode::kNegate, Opcode::kExp,   Opcode::kSin, Opcode::kCos, Opcode::kSqrt,
              Opcode::kSign,   Opcode::kExpm1, Opcode::kLog, Opcode::kAbs};
  }
  return {};
}

bool ContainsAny(const Module& module, const std::set<Opcode>& opcodes) {
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (opcodes.count(instruction->opcode) != 0) return true;
    }
  }
  return false;
}

TEST(GraphGeneratorTest, EveryGraphVerifiesAndFitsItsArguments) {
  for (OpFamily family : AllOpFamilies()) {
    for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
      SCOPED_TRACE(std::string(OpFamilyName(family)) + " seed " + std::to_string(seed));
      KILN_ASSERT_OK_AND_ASSIGN(GeneratedGraph graph, GenerateGraph(family, seed));
      KILN_ASSERT_OK(VerifyModule(*graph.module));
      const Computation& entry = *graph.module->entry();
      const auto op_count = static_cast<int64_t>(entry.instructions().size());
      EXPECT_GE(op_count, 5);
      EXPECT_LE(op_count, 40);
      ASSERT_EQ(entry.parameters().size(), graph.arguments.size());
      for (size_t i = 0; i < graph.arguments.size(); ++i) {
        EXPECT_TRUE(entry.parameter(i)->shape.Compatible(graph.arguments[i].shape()));
      }
      EXPECT_EQ(entry.root()->shape.Leaves().size(), graph.checks.size());
      const std::set<Opcode> expected = FamilyOpcodes(family);
      if (!expected.empty()) {
        EXPECT_TRUE(ContainsAny(*graph.module, expected)) << PrintModule(*graph.module);
      }
    }
  }
}

TEST(GraphGeneratorTest, EqualSeedsGiveEqualGraphs) {
  for (OpFamily family : AllOpFamilies()) {
    KILN_ASSERT_OK_AND_ASSIGN(GeneratedGraph first, GenerateGraph(family, 7));
    KILN_ASSERT_OK_AND_ASSIGN(GeneratedGraph second, GenerateGraph(family, 7));
    EXPECT_EQ(PrintModule(*first.module), PrintModule(*second.module));
    ASSERT_EQ(first.arguments.size(), second.arguments.size());
    for (size_t i = 0; i < first.arguments.size(); ++i) EXPECT_EQ(first.arguments[i], second.arguments[i]);
  }
}

TEST(GraphGeneratorTest, DifferentSeedsGiveDifferentGraphs) {
  std::set<std::string> texts;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    KILN_ASSERT_OK_AND_ASSIGN(GeneratedGraph graph, GenerateGraph(OpFamily::kMixed, seed));
    texts.insert(PrintModule(*graph.module));
  }
  EXPECT_EQ(texts.size(), kSeeds);
}

TEST(GraphGeneratorTest, SeedsCoverEveryElementType) {
  for (OpFamily family : AllOpFamilies()) {
    std::set<ElementType> types;
    for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
      KILN_ASSERT_OK_AND_ASSIGN(GeneratedGraph graph, GenerateGraph(family, seed));
      types.insert(graph.element_type);
    }
    EXPECT_EQ(types.size(), FamilyElementTypes(family).size()) << OpFamilyName(family);
  }
}

TEST(GraphGeneratorTest, ExactFloatResultsAreSmallIntegers) {
  // Exactness is what lets discontinuous ops see float values: check the
  // claim on the interpreter's results for every float graph.
  for (OpFamily family : AllOpFamilies()) {
    for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
      KILN_ASSERT_OK_AND_ASSIGN(GeneratedGraph graph, GenerateGraph(family, seed));
      if (!IsFloating(graph.element_type)) continue;
      KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> interpreter, CreateBackend("interpreter"));
      KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> leaves,
                                testing::ExecuteLeaves(*interpreter, *graph.module, graph.arguments));
      for (size_t leaf = 0; leaf < leaves.size(); ++leaf) {
        if (!graph.checks[leaf].exact || !IsFloating(leaves[leaf].shape().element_type())) continue;
        for (int64_t i = 0; i < leaves[leaf].element_count(); ++i) {
          const double value = leaves[leaf].GetAsDouble(i);
          ASSERT_EQ(value, std::trunc(value))
              << OpFamilyName(family) << " seed " << seed << " leaf " << leaf << "\n"
              << PrintModule(*graph.module);
        }
      }
    }
  }
}

TEST(LeafCompareTest, ExactLeavesMustBeEqual) {
  const LeafCheck exact{true, 1.0};
  EXPECT_FALSE(
      LeafMismatch(Literal::FromVector<int32_t>({1, 2}), Literal::FromVector<int32_t>({1, 2}), exact));
  EXPECT_TRUE(
      LeafMismatch(Literal::FromVector<int32_t>({1, 2}), Literal::FromVector<int32_t>({1, 3}), exact));
  EXPECT_TRUE(LeafMismatch(Literal::FromVector<uint64_t>({~0ULL}), Literal::FromVector<uint64_t>({~0ULL - 1}),
                           exact));
  EXPECT_TRUE(LeafMismatch(Literal::FromVector<float>({1.0f}),
                           Literal::FromVector<float>({std::nextafter(1.0f, 2.0f)}), exact));
  EXPECT_TRUE(
      LeafMismatch(Literal::FromVector<float>({1.0f}), Literal::FromVector<float>({1.0f, 1.0f}), exact));
}

TEST(LeafCompareTest, NanEqualsNanOnly) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const LeafCheck loose{false, 100.0};
  EXPECT_FALSE(LeafMismatch(Literal::FromVector<float>({nan}), Literal::FromVector<float>({nan}), loose));
  EXPECT_TRUE(LeafMismatch(Literal::FromVector<float>({nan}), Literal::FromVector<float>({0.0f}), loose));
  EXPECT_TRUE(LeafMismatch(Literal::FromVector<float>({0.0f}), Literal::FromVector<float>({nan}), loose));
}

TEST(LeafCompareTest, InexactLeavesUseTheTypeToleranceAndMagnitude) {
  const LeafCheck unit{false, 1.0};
  EXPECT_FALSE(
      LeafMismatch(Literal::FromVector<float>({1.0f}), Literal::FromVector<float>({1.00005f}), unit));
  EXPECT_TRUE(LeafMismatch(Literal::FromVector<float>({1.0f}), Literal::FromVector<float>({1.001f}), unit));
  // A result near zero computed from values near 1000 may be off by 1000 * tolerance.
  const LeafCheck large{false, 1000.0};
  EXPECT_FALSE(LeafMismatch(Literal::FromVector<float>({0.0f}), Literal::FromVector<float>({0.05f}), large));
  EXPECT_TRUE(LeafMismatch(Literal::FromVector<float>({0.0f}), Literal::FromVector<float>({0.2f}), large));
}

}  // namespace
}  // namespace kiln::differential
