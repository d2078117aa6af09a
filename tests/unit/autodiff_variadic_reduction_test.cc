// Reductions over several operands: forward mode folds the tangents along
// with the reducer's own derivative (core/autodiff/jvp_variadic_reduction_rules.cc),
// reverse mode sends the cotangent to the element a choosing reducer chose
// (core/autodiff/variadic_reduction_rules.cc) and differentiates other
// reducers through a tree of their applications
// (core/autodiff/reduction_tree_rules.cc); checked against f64 central
// differences on the interpreter and cpu (and against each other) for an
// argmax-style reduce and reduce-window of (value, index) pairs and a
// reduce of two floats with a sum and a product.
#include <random>
#include <string>
#include <vector>

#include "core/hlo_parser.h"
#include "tests/unit/autodiff_gradient_check.h"
#include "tests/unit/autodiff_jvp_check.h"

namespace kiln {
namespace {

using testing::F64;
using testing::RandomF64;

// Keeps the larger value, and of equal ones the smaller index (the reducer
// JAX's argmax lowers to, without its NaN handling).
constexpr char kArgmax[] = R"(
argmax {
  av = f64[] parameter(0)
  ai = s32[] parameter(1)
  bv = f64[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(bv, av), direction=GT
  eq = pred[] compare(bv, av), direction=EQ
  lt = pred[] compare(bi, ai), direction=LT
  tie = pred[] and(eq, lt)
  pick = pred[] or(gt, tie)
  v = f64[] select(gt, bv, av)
  i = s32[] select(pick, bi, ai)
  ROOT r = (f64[], s32[]) tuple(v, i)
}
)";

std::unique_ptr<Module> ParseReductionModule(const std::string& text) {
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString() << "\n" << text;
  return module.ok() ? std::move(module).value() : nullptr;
}

TEST(AutodiffVariadicReductionTest, ArgmaxReduceForward) {
  auto module = ParseReductionModule(std::string("HloModule argmax_reduce\n") + kArgmax + R"(
ENTRY main {
  x = f64[3,4] parameter(0)
  iota = s32[3,4] iota(), iota_dimension=1
  lowest = f64[] constant(-1e30)
  zero = s32[] constant(0)
  r = (f64[3], s32[3]) reduce(x, iota, lowest, zero), dimensions={1}, to_apply=argmax
  v = f64[3] get-tuple-element(r), index=0
  i = s32[3] get-tuple-element(r), index=1
  s = f64[3] sine(v)
  ROOT out = (f64[3], s32[3]) tuple(s, i)
}
)");
  ASSERT_NE(module, nullptr);
  std::mt19937 random(1);
  const std::vector<Literal> inputs = {RandomF64(F64({3, 4}), random)};
  testing::ExpectJvpMatches(*module, {0}, inputs, 2);
  testing::ExpectGradientsMatchFiniteDifferences(*module, {0}, inputs, 3);
}

// An output no element beats comes from the initial value, which then gets
// its cotangent (in both modes).
TEST(AutodiffVariadicReductionTest, ArgmaxReduceFromTheInitialValue) {
  auto module = ParseReductionModule(std::string("HloModule argmax_initial\n") + kArgmax + R"(
ENTRY main {
  x = f64[2,3] parameter(0)
  start = f64[] parameter(1)
  iota = s32[2,3] iota(), iota_dimension=1
  none = s32[] constant(-1)
  r = (f64[2], s32[2]) reduce(x, iota, start, none), dimensions={1}, to_apply=argmax
  ROOT v = f64[2] get-tuple-element(r), index=0
}
)");
  ASSERT_NE(module, nullptr);
  std::mt19937 random(7);
  Literal rows = RandomF64(F64({2, 3}), random, -2.0, -1.0);
  rows.data<double>()[3] = 1.5;  // the second row beats the initial value 0.5 once
  const std::vector<Literal> inputs = {std::move(rows), Literal::Scalar<double>(0.5)};
  testing::ExpectGradientsMatchFiniteDifferences(*module, {0, 1}, inputs, 8);
  testing::ExpectJvpMatches(*module, {0, 1}, inputs, 9);
}

TEST(AutodiffVariadicReductionTest, SumAndProductReduceInBothModes) {
  auto module = ParseReductionModule(R"(HloModule sum_and_product
sum_prod {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  c = f64[] parameter(2)
  d = f64[] parameter(3)
  s = f64[] add(a, c)
  p = f64[] multiply(b, d)
  ROOT r = (f64[], f64[]) tuple(s, p)
}

ENTRY main {
  x = f64[2,3] parameter(0)
  y = f64[2,3] parameter(1)
  start = f64[] parameter(2)
  one = f64[] constant(1)
  ROOT r = (f64[2], f64[2]) reduce(x, y, start, one), dimensions={1}, to_apply=sum_prod
}
)");
  ASSERT_NE(module, nullptr);
  std::mt19937 random(3);
  testing::ExpectJvpMatches(*module, {0, 1, 2},
                            {RandomF64(F64({2, 3}), random), RandomF64(F64({2, 3}), random),
                             RandomF64(Shape::Scalar(ElementType::kF64), random)},
                            4);
  // Reverse mode through the tree of reducer applications (a sum and a
  // product: neither result chooses).
  testing::ExpectGradientsMatchFiniteDifferences(
      *module, {0, 1, 2},
      {RandomF64(F64({2, 3}), random), RandomF64(F64({2, 3}), random),
       RandomF64(Shape::Scalar(ElementType::kF64), random)},
      5);
}

TEST(AutodiffVariadicReductionTest, ArgmaxReduceWindowInBothModes) {
  // Overlapping windows, then strided windows over padding.
  for (const char* window : {"size=2 stride=1 pad=0_0", "size=3 stride=2 pad=1_1"}) {
    SCOPED_TRACE(window);
    const std::string size = std::string(window).starts_with("size=2") ? "5" : "3";
    auto module = ParseReductionModule(std::string("HloModule argmax_windows\n") + kArgmax + R"(
ENTRY main {
  x = f64[6] parameter(0)
  iota = s32[6] iota(), iota_dimension=0
  lowest = f64[] constant(-1e30)
  none = s32[] constant(-1)
  r = (f64[)" + size + "], s32[" + size +
                                       R"(]) reduce-window(x, iota, lowest, none), window={)" + window +
                                       R"(}, to_apply=argmax
  v = f64[)" + size + R"(] get-tuple-element(r), index=0
  ROOT m = f64[)" + size +
                                       R"(] multiply(v, v)
}
)");
    ASSERT_NE(module, nullptr);
    std::mt19937 random(5);
    const std::vector<Literal> inputs = {RandomF64(F64({6}), random)};
    testing::ExpectJvpMatches(*module, {0}, inputs, 6);
    testing::ExpectGradientsMatchFiniteDifferences(*module, {0}, inputs, 7);
  }
}

}  // namespace
}  // namespace kiln
