// Reductions with reducers no specialised rule covers: products, a reducer
// of one operand that is neither add, maximum nor minimum, and sums and
// products over several operands, in reduce and reduce-window. Reverse mode
// differentiates a tree of reducer applications
// (core/autodiff/reduction_tree_rules.cc), forward mode folds dual numbers
// (core/autodiff/jvp_variadic_reduction_rules.cc); both are checked against
// f64 central differences on the interpreter and cpu and against each
// other (<w, J v> == <J^T w, v>), products also exactly where elements are
// zero or repeated.
#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/hlo_parser.h"
#include "tests/unit/autodiff_gradient_check.h"
#include "tests/unit/autodiff_jvp_check.h"

namespace kiln {
namespace {

using testing::F64;
using testing::RandomF64;

constexpr char kMultiply[] = R"(
multiply {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT product = f64[] multiply(a, b)
}
)";

// (a + 1)(b + 1) - 1: associative and commutative, identity 0; neither
// add, maximum nor minimum.
constexpr char kShiftedProduct[] = R"(
shifted_product {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  one = f64[] constant(1)
  a1 = f64[] add(a, one)
  b1 = f64[] add(b, one)
  p = f64[] multiply(a1, b1)
  ROOT r = f64[] subtract(p, one)
}
)";

std::unique_ptr<Module> ParseTreeModule(const std::string& text) {
  auto module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString() << "\n" << text;
  return module.ok() ? std::move(module).value() : nullptr;
}

std::string Dimensions(const std::vector<int64_t>& dimensions) {
  std::string text;
  for (size_t i = 0; i < dimensions.size(); ++i) text += (i == 0 ? "" : ",") + std::to_string(dimensions[i]);
  return text;
}

// reduce(x, init) over `reduced` with `reducer` (one of the texts above,
// named `name`), init a parameter.
std::unique_ptr<Module> ReduceModule(const Shape& operand, const std::vector<int64_t>& reduced,
                                     const char* reducer, const std::string& name) {
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) kept.push_back(operand.dimensions(d));
  }
  return ParseTreeModule("HloModule reduce_tree\n" + std::string(reducer) + "\nENTRY main {\n  x = f64[" +
                         Dimensions(operand.dimensions()) +
                         "] parameter(0)\n  init = f64[] parameter(1)\n  ROOT r = f64[" + Dimensions(kept) +
                         "] reduce(x, init), dimensions={" + Dimensions(reduced) + "}, to_apply=" + name +
                         "\n}\n");
}

// Values in [-2, 2) with some zeros and some repeated values.
Literal WithZerosAndRepeats(const Shape& shape, std::mt19937& random) {
  Literal values = RandomF64(shape, random);
  std::span<double> data = values.data<double>();
  std::uniform_int_distribution<int> kind(0, 5);
  for (size_t i = 0; i < data.size(); ++i) {
    const int k = kind(random);
    if (k == 0) data[i] = 0.0;
    if (k == 1 && i > 0) data[i] = data[i - 1];
  }
  return values;
}

// Initial values other than the reducer's identity: the fold applies them
// once (the tree does too).
TEST(AutodiffReductionTreeTest, ProductAndOtherReducersOverRandomDimensionsInBothModes) {
  std::mt19937 random(21);
  for (int trial = 0; trial < 8; ++trial) {
    const Shape operand = testing::RandomF64Shape(random, 3);
    std::vector<int64_t> reduced;
    for (int64_t d = 0; d < operand.rank(); ++d) {
      if (random() % 2 == 0) reduced.push_back(d);
    }
    if (reduced.empty()) reduced.push_back(static_cast<int64_t>(random() % operand.rank()));
    const bool product = trial % 2 == 0;
    auto module = product ? ReduceModule(operand, reduced, kMultiply, "multiply")
                          : ReduceModule(operand, reduced, kShiftedProduct, "shifted_product");
    ASSERT_NE(module, nullptr);
    SCOPED_TRACE(operand.ToString() + " reduced over {" + Dimensions(reduced) + "}");
    const std::vector<Literal> inputs = {
        product ? WithZerosAndRepeats(operand, random) : RandomF64(operand, random, -0.9, 0.9),
        Literal::Scalar<double>(product ? 1.5 : 0.3)};
    testing::ExpectGradientsMatchFiniteDifferences(*module, {0, 1}, inputs, 30 + trial);
    testing::ExpectJvpMatches(*module, {0, 1}, inputs, 40 + trial);
  }
}

// Runs `module` on `backend` and returns its result leaves.
std::vector<Literal> Leaves(const Module& module, const std::vector<Literal>& inputs, const char* backend) {
  StatusOr<Literal> result = testing::Run(module, inputs, backend);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  if (!result.ok()) return {};
  return result->Leaves();
}

// d/dx_i of x_0 x_1 ... x_n-1 is the product of the others: exactly 0
// beside two zeros, the others' product at a single zero, and equal
// values get equal gradients. Forward mode gives sum_i v_i of those.
TEST(AutodiffReductionTreeTest, ProductGradientsAreExactAtZerosAndRepeats) {
  auto module = ReduceModule(F64({5}), {0}, kMultiply, "multiply");
  ASSERT_NE(module, nullptr);
  KILN_ASSERT_OK_AND_ASSIGN(auto vjp, autodiff::BuildVjp(*module, std::vector<int64_t>{0, 1}));
  KILN_ASSERT_OK_AND_ASSIGN(auto jvp, autodiff::BuildJvp(*module, std::vector<int64_t>{0}));
  struct Case {
    std::vector<double> x;
    std::vector<double> gradient;  // with init 1
  };
  const Case cases[] = {
      {{2, 0, 3, 5, -1}, {0, -30, 0, 0, 0}},
      {{2, 0, 3, 0, -1}, {0, 0, 0, 0, 0}},
      {{2, 2, 3, 3, 0.5}, {9, 9, 6, 6, 36}},
      {{0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}},
  };
  const std::vector<double> tangent = {1, 10, 100, 1000, 10000};
  for (const Case& c : cases) {
    double product = 1.0;
    for (double v : c.x) product *= v;
    double directional = 0.0;
    for (size_t i = 0; i < c.x.size(); ++i) directional += tangent[i] * c.gradient[i];
    for (const char* backend : {"interpreter", "cpu"}) {
      SCOPED_TRACE(std::string(backend) + " x = {" + std::to_string(c.x[0]) + ", ...}");
      const std::vector<Literal> reverse =
          Leaves(*vjp, {Literal::FromVector<double>(c.x), Literal::Scalar<double>(1.0)}, backend);
      ASSERT_EQ(reverse.size(), 3u);
      EXPECT_EQ(reverse[0].GetAsDouble(0), product);
      for (size_t i = 0; i < c.x.size(); ++i)
        EXPECT_EQ(reverse[1].GetAsDouble(static_cast<int64_t>(i)), c.gradient[i]) << i;
      EXPECT_EQ(reverse[2].GetAsDouble(0), product);  // d/d init of init * product
      const std::vector<Literal> forward =
          Leaves(*jvp,
                 {Literal::FromVector<double>(c.x), Literal::Scalar<double>(1.0),
                  Literal::FromVector<double>(tangent)},
                 backend);
      ASSERT_EQ(forward.size(), 2u);
      EXPECT_EQ(forward[0].GetAsDouble(0), product);
      EXPECT_EQ(forward[1].GetAsDouble(0), directional);
    }
  }
}

// The gradient of a cumulative product over 512 elements (jnp.cumprod's
// reduce-window): its tree of maps over pads and slices is nine rungs deep,
// which the cpu backend once fused into one kernel evaluated 512 times per
// element (a 14 s compile). Its kernels are now bounded (fusion's
// max_emissions_per_value, tested in fusion_pass_test) and its gathered
// positions s32; the results are the interpreter's.
TEST(AutodiffReductionTreeTest, CumulativeProductGradientOnCpuIsTheInterpreters) {
  auto module = ParseTreeModule(R"(HloModule cumprod
mul {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] multiply(a, b)
}
ENTRY main {
  x = f32[2,512] parameter(0)
  one = f32[] constant(1)
  ROOT c = f32[2,512] reduce-window(x, one), window={size=1x512 pad=0_0x511_0}, to_apply=mul
})");
  ASSERT_NE(module, nullptr);
  KILN_ASSERT_OK_AND_ASSIGN(auto vjp, autodiff::BuildVjp(*module, std::vector<int64_t>{0}));
  // The windows' positions (2 x 512 x 512 x 2 of them) are s32: no s64
  // array doubles the gradient's index traffic.
  for (const auto& computation : vjp->computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->shape.IsArray()) {
        EXPECT_NE(instruction->shape.element_type(), ElementType::kS64) << instruction->ToString();
      }
    }
  }
  std::mt19937 random(19);
  std::uniform_real_distribution<float> factor(0.9f, 1.1f), weight(-1.0f, 1.0f);
  std::vector<float> x(1024), cotangent(1024);
  for (float& v : x) v = factor(random);
  for (float& v : cotangent) v = weight(random);
  const std::vector<Literal> inputs = {Literal::FromVector<float>(x, {2, 512}),
                                       Literal::FromVector<float>(cotangent, {2, 512})};
  const std::vector<Literal> expected = Leaves(*vjp, inputs, "interpreter");
  const std::vector<Literal> got = Leaves(*vjp, inputs, "cpu");
  ASSERT_EQ(expected.size(), 2u);
  ASSERT_EQ(got.size(), 2u);
  for (size_t leaf = 0; leaf < 2; ++leaf) {
    for (int64_t i = 0; i < 1024; ++i) {
      const double want = expected[leaf].GetAsDouble(i);
      ASSERT_NEAR(got[leaf].GetAsDouble(i), want, 1e-5 * (1.0 + std::abs(want)))
          << "leaf " << leaf << " at " << i;
    }
  }
}

// The gradient module of a product differentiates again (its tree is maps
// and slices): second derivatives against central differences of the
// gradient, in both modes.
TEST(AutodiffReductionTreeTest, SecondDerivativesOfAProduct) {
  auto module = ReduceModule(F64({2, 3}), {1}, kMultiply, "multiply");
  ASSERT_NE(module, nullptr);
  KILN_ASSERT_OK_AND_ASSIGN(auto gradient, autodiff::BuildVjp(*module, std::vector<int64_t>{0}));
  std::mt19937 random(81);
  const std::vector<Literal> inputs = {RandomF64(F64({2, 3}), random), Literal::Scalar<double>(1.0),
                                       RandomF64(F64({2}), random)};
  testing::ExpectGradientsMatchFiniteDifferences(*gradient, {0}, inputs, 82);
  testing::ExpectJvpMatches(*gradient, {0}, inputs, 83);
}

// Product and (a + 1)(b + 1) - 1 windows: overlapping, strided over
// padding, base- and window-dilated, 2-d; initial values other than the
// identity (the reduce-window applies them once and skips padding and
// holes).
TEST(AutodiffReductionTreeTest, ReduceWindowsWithAnyReducerInBothModes) {
  struct WindowCase {
    std::vector<int64_t> operand;
    std::vector<int64_t> result;
    std::string window;
  };
  const WindowCase windows[] = {
      {{6}, {5}, "size=2 stride=1"},
      {{7}, {4}, "size=3 stride=2 pad=1_1"},
      {{4}, {6}, "size=3 stride=1 pad=1_0 lhs_dilate=2"},
      {{7}, {2}, "size=2 stride=2 rhs_dilate=3"},
      {{3, 5}, {2, 3}, "size=2x3 stride=1x2 pad=0_0x1_1"},
  };
  std::mt19937 random(51);
  for (const WindowCase& w : windows) {
    for (const bool product : {true, false}) {
      SCOPED_TRACE(w.window + (product ? " product" : " shifted product"));
      auto module =
          ParseTreeModule("HloModule windows\n" + std::string(product ? kMultiply : kShiftedProduct) +
                          "\nENTRY main {\n  x = f64[" + Dimensions(w.operand) +
                          "] parameter(0)\n  init = f64[] parameter(1)\n  ROOT r = f64[" +
                          Dimensions(w.result) + "] reduce-window(x, init), window={" + w.window +
                          "}, to_apply=" + (product ? "multiply" : "shifted_product") + "\n}\n");
      ASSERT_NE(module, nullptr);
      const Shape operand = F64(w.operand);
      const std::vector<Literal> inputs = {
          product ? WithZerosAndRepeats(operand, random) : RandomF64(operand, random, -0.9, 0.9),
          Literal::Scalar<double>(product ? 1.5 : 0.3)};
      testing::ExpectGradientsMatchFiniteDifferences(*module, {0, 1}, inputs, 60);
      testing::ExpectJvpMatches(*module, {0, 1}, inputs, 61);
    }
  }
}

// A sum and a product over two operands in windows (neither result
// chooses), reverse and forward.
TEST(AutodiffReductionTreeTest, SumAndProductReduceWindowInBothModes) {
  auto module = ParseTreeModule(R"(HloModule sum_and_product_windows
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
  x = f64[7] parameter(0)
  y = f64[7] parameter(1)
  zero = f64[] constant(0)
  one = f64[] constant(1)
  ROOT r = (f64[4], f64[4]) reduce-window(x, y, zero, one), window={size=3 stride=2 pad=1_1}, to_apply=sum_prod
}
)");
  ASSERT_NE(module, nullptr);
  std::mt19937 random(71);
  const std::vector<Literal> inputs = {RandomF64(F64({7}), random), WithZerosAndRepeats(F64({7}), random)};
  testing::ExpectGradientsMatchFiniteDifferences(*module, {0, 1}, inputs, 72);
  testing::ExpectJvpMatches(*module, {0, 1}, inputs, 73);
}

// A reducer whose body cannot be lifted to arrays stays refused, naming
// the op in the body and the reduce.
TEST(AutodiffReductionTreeTest, AReducerWithoutADerivativeIsNamed) {
  auto module = ParseTreeModule(R"(HloModule opaque_reducer
opaque {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT c = f64[] custom-call(a, b), custom_call_target="my_reducer"
}

ENTRY main {
  x = f64[4] parameter(0)
  zero = f64[] constant(0)
  ROOT r = f64[] reduce(x, zero), dimensions={0}, to_apply=opaque
}
)");
  ASSERT_NE(module, nullptr);
  const auto refused = autodiff::BuildVjp(*module, std::vector<int64_t>{0});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("'custom-call'"), std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("in the reducer of 'reduce' r"), std::string::npos)
      << refused.status().message();
  const auto forward = autodiff::BuildJvp(*module, std::vector<int64_t>{0});
  ASSERT_FALSE(forward.ok());
  EXPECT_EQ(forward.status().code(), StatusCode::kInvalidArgument) << forward.status().ToString();
  EXPECT_NE(forward.status().message().find("'custom-call' is not differentiable"), std::string::npos)
      << forward.status().message();
}

}  // namespace
}  // namespace kiln
