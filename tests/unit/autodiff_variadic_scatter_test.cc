// Scatters over several operands in both modes against f64 central
// differences on the interpreter and cpu, and against each other
// (<w, J v> == <J^T w, v>): a combiner that works component by component
// (core/autodiff/variadic_scatter_rules.cc), an add and an overwrite
// component with repeated indices; a combiner that mixes components (a
// product of complex-like (re, im) pairs) when no two updates land on one
// element (core/autodiff/scatter_helpers.h: unique_indices=true, or
// constant indices with disjoint windows), and its refusal by name where
// indices may repeat.
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/hlo_parser.h"
#include "tests/unit/autodiff_gradient_check.h"
#include "tests/unit/autodiff_jvp_check.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

using testing::F64;
using testing::RandomF64;

// Two scatters in one: `first` combines the operands' first components,
// the second component is overwritten.
std::string TwoScatters(const std::string& first) {
  return R"(HloModule two_scatters
combine {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  c = f64[] parameter(2)
  d = f64[] parameter(3)
  s = f64[] )" +
         first + R"(
  ROOT r = (f64[], f64[]) tuple(s, d)
}

ENTRY main {
  x = f64[5,2] parameter(0)
  y = f64[5,2] parameter(1)
  u = f64[3,2] parameter(2)
  w = f64[3,2] parameter(3)
  indices = s32[3,1] constant({{1}, {3}, {1}})
  r = (f64[5,2], f64[5,2]) scatter(x, y, indices, u, w), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine
  a = f64[5,2] get-tuple-element(r), index=0
  b = f64[5,2] get-tuple-element(r), index=1
  sa = f64[5,2] sine(a)
  bb = f64[5,2] multiply(b, b)
  ROOT out = (f64[5,2], f64[5,2]) tuple(sa, bb)
}
)";
}

TEST(AutodiffVariadicScatterTest, ComponentwiseCombinersInBothModes) {
  auto module = testing::ParseHloOrFail(TwoScatters("add(a, c)"));
  ASSERT_NE(module, nullptr);
  std::mt19937 random(1);
  const std::vector<Literal> inputs = {RandomF64(F64({5, 2}), random), RandomF64(F64({5, 2}), random),
                                       RandomF64(F64({3, 2}), random), RandomF64(F64({3, 2}), random)};
  testing::ExpectGradientsMatchFiniteDifferences(*module, {0, 1, 2, 3}, inputs, 2);
  testing::ExpectJvpMatches(*module, {0, 1, 2, 3}, inputs, 3);
}

// Two f64[4,3] operands scattered with (re, im) = (a c - b d, a d + b c),
// (a, b) an operand pair and (c, d) an update pair: each result reads both
// components. `indices` is an s32 constant, or empty for a parameter (the
// module's fifth); `numbers` the scatter's dimension numbers.
std::string ComplexProductScatters(const std::string& updates, const std::string& indices_shape,
                                   const std::string& indices, const std::string& numbers) {
  const std::string index_source = indices.empty() ? "parameter(4)" : "constant(" + indices + ")";
  return R"(HloModule complex_product_scatters
times {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  c = f64[] parameter(2)
  d = f64[] parameter(3)
  ac = f64[] multiply(a, c)
  bd = f64[] multiply(b, d)
  ad = f64[] multiply(a, d)
  bc = f64[] multiply(b, c)
  re = f64[] subtract(ac, bd)
  im = f64[] add(ad, bc)
  ROOT pair = (f64[], f64[]) tuple(re, im)
}

ENTRY main {
  x = f64[4,3] parameter(0)
  y = f64[4,3] parameter(1)
  u = )" +
         updates + R"( parameter(2)
  w = )" +
         updates + R"( parameter(3)
  indices = )" +
         indices_shape + " " + index_source + R"(
  r = (f64[4,3], f64[4,3]) scatter(x, y, indices, u, w), )" +
         numbers + R"(, to_apply=times
  a = f64[4,3] get-tuple-element(r), index=0
  b = f64[4,3] get-tuple-element(r), index=1
  sa = f64[4,3] sine(a)
  bb = f64[4,3] multiply(b, b)
  ROOT out = (f64[4,3], f64[4,3]) tuple(sa, bb)
}
)";
}

const char kRows[] =
    "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1";
const char kWindows[] =
    "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0,1}, "
    "index_vector_dim=1";

// Every operand and update differentiated, in both modes; `indices` is
// the module's fifth parameter where it has one.
void ExpectBothModesMatch(const Module& module, const Shape& updates, std::optional<Literal> indices,
                          uint32_t seed) {
  std::mt19937 random(seed);
  std::vector<Literal> inputs = {RandomF64(F64({4, 3}), random), RandomF64(F64({4, 3}), random),
                                 RandomF64(updates, random), RandomF64(updates, random)};
  if (indices.has_value()) inputs.push_back(std::move(indices).value());
  testing::ExpectGradientsMatchFiniteDifferences(module, {0, 1, 2, 3}, inputs, seed + 1);
  testing::ExpectJvpMatches(module, {0, 1, 2, 3}, inputs, seed + 2);
  testing::ExpectJvpMatches(module, {1, 2}, inputs, seed + 3);
}

// The scatter says its run-time indices are unique (rows 3, 0 and 2).
TEST(AutodiffVariadicScatterTest, MixingCombinerWithUniqueIndicesInBothModes) {
  std::string text = ComplexProductScatters("f64[3,3]", "s32[3,1]", "", kRows);
  text.replace(text.find("to_apply=times"), 14, "unique_indices=true, to_apply=times");
  auto module = testing::ParseHloOrFail(text);
  ASSERT_NE(module, nullptr);
  ExpectBothModesMatch(*module, F64({3, 3}), Literal::FromVector<int32_t>({3, 0, 2}, {3, 1}), 10);
}

// Constant 1 x 2 windows at (0, 0), (2, 1) and (3, 0), disjoint, and one
// at (1, 2) that does not fit (dropped).
TEST(AutodiffVariadicScatterTest, MixingCombinerWithDisjointConstantWindowsInBothModes) {
  auto module = testing::ParseHloOrFail(
      ComplexProductScatters("f64[4,2]", "s32[4,2]", "{{0, 0}, {2, 1}, {1, 2}, {3, 0}}", kWindows));
  ASSERT_NE(module, nullptr);
  ExpectBothModesMatch(*module, F64({4, 2}), std::nullopt, 20);
}

// Where updates may land on one element (rows 1, 3, 1; run-time indices the
// scatter does not call unique; windows at (0, 0) and (0, 1) that share
// (0, 1)), the result depends on the order XLA applies them in: both modes
// refuse with INVALID_ARGUMENT naming the scatter and the combiner.
TEST(AutodiffVariadicScatterTest, MixingCombinerWithRepeatableIndicesIsRefused) {
  const std::string texts[] = {
      ComplexProductScatters("f64[3,3]", "s32[3,1]", "{{1}, {3}, {1}}", kRows),
      ComplexProductScatters("f64[3,3]", "s32[3,1]", "", kRows),
      ComplexProductScatters("f64[2,2]", "s32[2,2]", "{{0, 0}, {0, 1}}", kWindows),
  };
  for (const std::string& text : texts) {
    auto module = testing::ParseHloOrFail(text);
    ASSERT_NE(module, nullptr);
    for (const bool reverse : {true, false}) {
      const Status status = reverse ? autodiff::BuildVjp(*module, std::vector<int64_t>{0, 2}).status()
                                    : autodiff::BuildJvp(*module, std::vector<int64_t>{0, 2}).status();
      EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
      for (const char* part : {reverse ? "kiln grad" : "kiln jvp", "'scatter' (instruction r)",
                               "combiner 'times'", "unspecified order", "unique_indices=true"}) {
        EXPECT_NE(status.message().find(part), std::string::npos) << part << " in " << status.message();
      }
    }
  }
}

}  // namespace
}  // namespace kiln
