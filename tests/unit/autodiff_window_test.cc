// Reverse mode over reduce-window (sum, max, min): gradients against f64
// central differences for random 1-d and 2-d windows (strides, padding,
// base and window dilation), on the interpreter and cpu; max-pooling's
// refusal of window dilation; select-and-scatter (GE/LE select, add
// scatter) and max-pooling's second derivatives.
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>

#include "tests/unit/autodiff_gradient_check.h"

namespace kiln {
namespace {

using testing::ExpectGradientsMatchFiniteDifferences;
using testing::RandomF64;

struct RandomWindow {
  Shape operand;
  std::vector<int64_t> sizes, strides, base_dilation, window_dilation;
  std::vector<std::pair<int64_t, int64_t>> padding;
  std::string description;
};

RandomWindow MakeWindow(int64_t rank, bool window_dilation, std::mt19937& random) {
  auto pick = [&](int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(random);
  };
  RandomWindow w;
  std::vector<int64_t> dimensions;
  for (int64_t d = 0; d < rank; ++d) {
    for (;;) {
      const int64_t size = pick(rank == 1 ? 3 : 2, rank == 1 ? 8 : 5);
      const int64_t window = pick(1, 3);
      const int64_t stride = pick(1, 3);
      const int64_t base = pick(1, 2);
      const int64_t dilation = window_dilation ? pick(1, 2) : 1;
      const int64_t low = pick(-1, 2);
      const int64_t high = pick(-1, 2);
      if ((size - 1) * base + 1 + low + high < (window - 1) * dilation + 1) continue;
      dimensions.push_back(size);
      w.sizes.push_back(window);
      w.strides.push_back(stride);
      w.base_dilation.push_back(base);
      w.window_dilation.push_back(dilation);
      w.padding.push_back({low, high});
      w.description += " size " + std::to_string(size) + " window " + std::to_string(window) + " stride " +
                       std::to_string(stride) + " base_dilation " + std::to_string(base) +
                       " window_dilation " + std::to_string(dilation) + " padding " + std::to_string(low) +
                       "/" + std::to_string(high) + ";";
      break;
    }
  }
  w.operand = Shape(ElementType::kF64, dimensions);
  return w;
}

// sin(reduce-window(x, init)) with `reducer`; the initial value is
// parameter 1 when it is within the inputs' range (-2, 2), else a constant
// (one no window of inputs beats: it wins only windows of holes and padding).
bool IsParameter(double init) { return std::fabs(init) < 2; }

std::unique_ptr<Module> BuildWindow(const RandomWindow& w, Opcode reducer, double init) {
  Builder builder("window");
  Op x = builder.Parameter(0, w.operand, "x");
  Op init_value = IsParameter(init) ? builder.Parameter(1, Shape::Scalar(ElementType::kF64), "init")
                                    : builder.ConstantR0<double>(init);
  auto computation = testing::ScalarBinaryComputation(reducer, ElementType::kF64, "reducer");
  EXPECT_TRUE(computation.ok());
  const Op operands[] = {x};
  const Op inits[] = {init_value};
  builder.Sin(builder.ReduceWindowWithGeneralPadding(operands, inits, **computation, w.sizes, w.strides,
                                                     w.base_dilation, w.window_dilation, w.padding));
  auto module = builder.Build();
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

void CheckRandomWindows(Opcode reducer, int64_t rank, double init, uint32_t seed, int trials) {
  std::mt19937 random(seed);
  for (int trial = 0; trial < trials; ++trial) {
    const RandomWindow w = MakeWindow(rank, reducer == Opcode::kAdd, random);
    SCOPED_TRACE(w.operand.ToString() + w.description);
    auto module = BuildWindow(w, reducer, init);
    ASSERT_NE(module, nullptr);
    std::vector<Literal> inputs = {RandomF64(w.operand, random)};
    std::vector<int64_t> wrt = {0};
    if (IsParameter(init)) {
      inputs.push_back(Literal::Scalar<double>(init));
      wrt.push_back(1);
    }
    ExpectGradientsMatchFiniteDifferences(*module, wrt, std::move(inputs),
                                          seed + static_cast<uint32_t>(trial));
  }
}

TEST(AutodiffWindowTest, SumWindows) {
  CheckRandomWindows(Opcode::kAdd, 1, 0.5, 1, 6);
  CheckRandomWindows(Opcode::kAdd, 2, -0.25, 2, 5);
}

TEST(AutodiffWindowTest, MaxPooling) {
  CheckRandomWindows(Opcode::kMaximum, 1, -10, 3, 6);
  CheckRandomWindows(Opcode::kMaximum, 2, -10, 4, 5);
}

TEST(AutodiffWindowTest, MinPooling) {
  CheckRandomWindows(Opcode::kMinimum, 1, 10, 5, 4);
  CheckRandomWindows(Opcode::kMinimum, 2, 10, 6, 4);
}

// A finite initial value that wins some windows gets their cotangent.
TEST(AutodiffWindowTest, MaxWithAnInitialValueThatWins) {
  CheckRandomWindows(Opcode::kMaximum, 1, 0.9, 7, 4);
  CheckRandomWindows(Opcode::kMinimum, 2, -0.9, 8, 3);
}

// Tied maxima: the cotangent goes to the first of them (XLA's select-and-scatter).
TEST(AutodiffWindowTest, TiedMaximaGiveTheFirstTheCotangent) {
  RandomWindow w;
  w.operand = Shape(ElementType::kF64, {4});
  w.sizes = {2};
  w.strides = {2};
  w.base_dilation = {1};
  w.window_dilation = {1};
  w.padding = {{0, 0}};
  auto module = BuildWindow(w, Opcode::kMaximum, -std::numeric_limits<double>::infinity());
  ASSERT_NE(module, nullptr);
  KILN_ASSERT_OK_AND_ASSIGN(auto vjp, autodiff::BuildVjp(*module, std::vector<int64_t>{0}));
  const Literal inputs[] = {Literal::FromVector<double>({1.0, 1.0, -2.0, -2.0}),
                            Literal::FromVector<double>({1.0, 1.0})};
  for (const char* backend : {"interpreter", "cpu"}) {
    KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Run(*vjp, inputs, backend));
    const Literal& gradient = result.tuple_elements()[1];
    const double expected[] = {std::cos(1.0), 0.0, std::cos(-2.0), 0.0};
    for (int64_t i = 0; i < 4; ++i)
      EXPECT_DOUBLE_EQ(gradient.GetAsDouble(i), expected[i]) << backend << " " << i;
  }
}

TEST(AutodiffWindowTest, MaxPoolingWithWindowDilationIsRefused) {
  RandomWindow w;
  w.operand = Shape(ElementType::kF64, {6});
  w.sizes = {2};
  w.strides = {1};
  w.base_dilation = {1};
  w.window_dilation = {2};
  w.padding = {{0, 0}};
  auto module = BuildWindow(w, Opcode::kMaximum, -std::numeric_limits<double>::infinity());
  ASSERT_NE(module, nullptr);
  const auto vjp = autodiff::BuildVjp(*module, std::vector<int64_t>{0});
  ASSERT_FALSE(vjp.ok());
  EXPECT_EQ(vjp.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(vjp.status().message().find("'reduce-window'"), std::string::npos) << vjp.status().message();
}

std::unique_ptr<Module> Comparison(ComparisonDirection direction) {
  Builder builder("select");
  builder.Compare(builder.Parameter(0, Shape::Scalar(ElementType::kF64), "a"),
                  builder.Parameter(1, Shape::Scalar(ElementType::kF64), "b"), direction);
  auto module = builder.Build();
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

// sin(select-and-scatter(x, source, init)): gradients of source and init
// (x's is zero at generic points), random windows; a max scatter is refused.
TEST(AutodiffWindowTest, SelectAndScatterAddIsLinearInItsSource) {
  std::mt19937 random(9);
  KILN_ASSERT_OK_AND_ASSIGN(auto add,
                            testing::ScalarBinaryComputation(Opcode::kAdd, ElementType::kF64, "add"));
  KILN_ASSERT_OK_AND_ASSIGN(auto max,
                            testing::ScalarBinaryComputation(Opcode::kMaximum, ElementType::kF64, "max"));
  for (int trial = 0; trial < 6; ++trial) {
    const RandomWindow w = MakeWindow(trial % 2 == 0 ? 1 : 2, /*window_dilation=*/false, random);
    std::vector<int64_t> source_dimensions;
    for (int64_t d = 0; d < w.operand.rank(); ++d) {
      const int64_t padded = w.operand.dimensions(d) + w.padding[static_cast<size_t>(d)].first +
                             w.padding[static_cast<size_t>(d)].second;
      source_dimensions.push_back(
          padded < w.sizes[static_cast<size_t>(d)]
              ? 0
              : (padded - w.sizes[static_cast<size_t>(d)]) / w.strides[static_cast<size_t>(d)] + 1);
    }
    const Shape source_shape(ElementType::kF64, source_dimensions);
    if (source_shape.element_count() == 0) continue;
    SCOPED_TRACE(w.operand.ToString() + w.description);
    auto select = Comparison(trial < 3 ? ComparisonDirection::kGe : ComparisonDirection::kLt);
    ASSERT_NE(select, nullptr);
    for (const Module* scatter : {add.get(), max.get()}) {
      Builder builder("select_and_scatter");
      Op x = builder.Parameter(0, w.operand, "x");
      Op source = builder.Parameter(1, source_shape, "source");
      Op init = builder.Parameter(2, Shape::Scalar(ElementType::kF64), "init");
      builder.Sin(builder.SelectAndScatterWithGeneralPadding(x, *select, w.sizes, w.strides, w.padding,
                                                             builder.Mul(source, source), init, *scatter));
      KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
      if (scatter == max.get()) {
        const auto refused = autodiff::BuildVjp(*module, std::vector<int64_t>{1});
        ASSERT_FALSE(refused.ok());
        EXPECT_EQ(refused.status().code(), StatusCode::kUnimplemented);
        EXPECT_NE(refused.status().message().find("'select-and-scatter'"), std::string::npos)
            << refused.status().message();
        continue;
      }
      ExpectGradientsMatchFiniteDifferences(
          *module, {0, 1, 2},
          {RandomF64(w.operand, random), RandomF64(source_shape, random), Literal::Scalar<double>(0.3)},
          static_cast<uint32_t>(trial));
    }
  }
}

// The gradient of max-pooling differentiated again.
TEST(AutodiffWindowTest, GradOfGradOfMaxPooling) {
  std::mt19937 random(10);
  for (int trial = 0; trial < 4; ++trial) {
    const RandomWindow w = MakeWindow(trial % 2 == 0 ? 1 : 2, /*window_dilation=*/false, random);
    SCOPED_TRACE(w.operand.ToString() + w.description);
    auto module = BuildWindow(w, Opcode::kMaximum, -10);
    ASSERT_NE(module, nullptr);
    KILN_ASSERT_OK_AND_ASSIGN(auto first, autodiff::BuildVjp(*module, std::vector<int64_t>{0}));
    const auto shape = module->entry()->root()->shape;
    ExpectGradientsMatchFiniteDifferences(*first, {0, 1},
                                          {RandomF64(w.operand, random), RandomF64(shape, random)},
                                          static_cast<uint32_t>(trial));
  }
}

}  // namespace
}  // namespace kiln
