// Row reductions that the vulkan backend computes with a subgroup per output
// element (lanes fold strided elements, then combine by shuffles), on
// lavapipe with the validation layers on, against the interpreter: rows that
// are not a multiple of the subgroup, an initial value that must count once,
// several trailing dimensions, a two-value (argmax) reduce with NaN and ties,
// and a pred reduce.
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "tests/unit/test_util.h"
#include "tests/vulkan/interpreter_agreement.h"

namespace kiln::vulkan {
namespace {

struct ReduceCase {
  const char* name;
  std::string hlo;
};

Literal Argument(const Shape& shape, uint32_t seed) {
  std::vector<double> values(static_cast<size_t>(shape.element_count()));
  uint32_t state = seed;
  for (size_t i = 0; i < values.size(); ++i) {
    state = state * 1664525u + 1013904223u;
    // Few distinct values, so that argmax meets ties; a pred is false now
    // and then.
    values[i] = shape.element_type() == ElementType::kPred ? (i * 7 + seed) % 53 != 0
                                                           : static_cast<double>((state >> 16) % 64) - 32.0;
  }
  if (shape.element_type() == ElementType::kF32 && values.size() > 300) {
    values[17] = std::numeric_limits<double>::quiet_NaN();
    values[260] = std::numeric_limits<double>::infinity();
  }
  StatusOr<Literal> literal = Literal::FromVector(values, shape.dimensions()).Convert(shape.element_type());
  EXPECT_TRUE(literal.ok()) << literal.status().ToString();
  return literal.ok() ? std::move(literal).value() : Literal(shape);
}

class CooperativeReduceTest : public ::testing::TestWithParam<ReduceCase> {};

TEST_P(CooperativeReduceTest, AgreesWithTheInterpreter) {
  const ReduceCase& c = GetParam();
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseHloModule(c.hlo));
  std::vector<Literal> arguments;
  uint32_t seed = 3;
  for (const Instruction* parameter : module->entry()->parameters())
    arguments.push_back(Argument(parameter->shape, seed++));
  ExpectVulkanAgreesWithInterpreter(*module, arguments, c.name);
}

const char kSum[] =
    "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n";

INSTANTIATE_TEST_SUITE_P(
    Rows, CooperativeReduceTest,
    ::testing::Values(
        ReduceCase{"ragged_rows_with_an_initial_value",
                   std::string("HloModule m\n") + kSum +
                       "ENTRY main {\n  a = f32[37,203] parameter(0)\n  z = f32[] constant(5)\n"
                       "  ROOT r = f32[37] reduce(a, z), dimensions={1}, to_apply=sum\n}\n"},
        ReduceCase{"two_trailing_dimensions_of_a_fused_product",
                   std::string("HloModule m\n") + kSum +
                       "ENTRY main {\n  a = f32[4,6,50] parameter(0)\n  b = f32[4,6,50] parameter(1)\n"
                       "  p = f32[4,6,50] multiply(a, b)\n  z = f32[] constant(0)\n"
                       "  ROOT r = f32[4] reduce(p, z), dimensions={1,2}, to_apply=sum\n}\n"},
        ReduceCase{
            "argmax_with_nan_and_ties",
            "HloModule m\nargmax {\n  a = f32[] parameter(0)\n  i = s32[] parameter(1)\n"
            "  b = f32[] parameter(2)\n  j = s32[] parameter(3)\n"
            "  gt = pred[] compare(a, b), direction=GT\n  nan = pred[] compare(a, a), direction=NE\n"
            "  pick_a = pred[] or(gt, nan)\n  eq = pred[] compare(a, b), direction=EQ\n"
            "  lt = pred[] compare(i, j), direction=LT\n  tie = pred[] and(eq, lt)\n"
            "  first = pred[] or(pick_a, tie)\n  v = f32[] select(pick_a, a, b)\n"
            "  k = s32[] select(first, i, j)\n  ROOT t = (f32[], s32[]) tuple(v, k)\n}\n"
            "ENTRY main {\n  a = f32[9,300] parameter(0)\n  i = s32[9,300] iota(), iota_dimension=1\n"
            "  lo = f32[] constant(-inf)\n  zero = s32[] constant(0)\n"
            "  ROOT r = (f32[9], s32[9]) reduce(a, i, lo, zero), dimensions={1}, to_apply=argmax\n}\n"},
        ReduceCase{"integer_max",
                   "HloModule m\nmax {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"
                   "  ROOT m = s32[] maximum(a, b)\n}\n"
                   "ENTRY main {\n  a = s32[11,64] parameter(0)\n  lo = s32[] constant(-1000)\n"
                   "  ROOT r = s32[11] reduce(a, lo), dimensions={1}, to_apply=max\n}\n"},
        ReduceCase{"all_of_a_pred_row",
                   "HloModule m\nall {\n  a = pred[] parameter(0)\n  b = pred[] parameter(1)\n"
                   "  ROOT m = pred[] and(a, b)\n}\n"
                   "ENTRY main {\n  a = pred[5,100] parameter(0)\n  t = pred[] constant(true)\n"
                   "  ROOT r = pred[5] reduce(a, t), dimensions={1}, to_apply=all\n}\n"}),
    [](const ::testing::TestParamInfo<ReduceCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace kiln::vulkan
