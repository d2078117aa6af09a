// Reverse mode over sort (one operand, several operands with integer ones
// among them, any dimension) and top-k (largest and smallest): gradients
// against f64 central differences on random shapes, on the interpreter and
// cpu.
#include <random>
#include <string>

#include "tests/unit/autodiff_gradient_check.h"

namespace kiln {
namespace {

using testing::ExpectGradientsMatchFiniteDifferences;
using testing::RandomF64;
using testing::RandomF64Shape;

// (k_lhs, k_rhs, then a pair per other operand) -> k_lhs > k_rhs.
std::unique_ptr<Module> KeysGreater(const std::vector<ElementType>& types) {
  Builder builder("greater");
  std::vector<Op> parameters;
  for (size_t i = 0; i < 2 * types.size(); ++i) {
    parameters.push_back(
        builder.Parameter(static_cast<int64_t>(i), Shape::Scalar(types[i / 2]), "p" + std::to_string(i)));
  }
  builder.Gt(parameters[0], parameters[1]);
  auto module = builder.Build();
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

TEST(AutodiffSortTest, OneOperandAlongTheLastDimension) {
  std::mt19937 random(1);
  for (int trial = 0; trial < 5; ++trial) {
    const Shape shape = RandomF64Shape(random);
    SCOPED_TRACE(shape.ToString());
    Builder builder("sort");
    Op x = builder.Parameter(0, shape, "x");
    builder.Sin(builder.Sort(builder.Mul(x, x)));
    KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
    ExpectGradientsMatchFiniteDifferences(*module, {0}, {RandomF64(shape, random)},
                                          static_cast<uint32_t>(trial));
  }
}

// Keys and values sorted together (descending, along a random dimension),
// an s32 operand alongside; both float operands get gradients.
TEST(AutodiffSortTest, SeveralOperandsAlongAnyDimension) {
  std::mt19937 random(2);
  for (int trial = 0; trial < 5; ++trial) {
    const Shape shape = RandomF64Shape(random);
    const int64_t dimension = std::uniform_int_distribution<int64_t>(0, shape.rank() - 1)(random);
    SCOPED_TRACE(shape.ToString() + " dimension " + std::to_string(dimension));
    auto comparator = KeysGreater({ElementType::kF64, ElementType::kS32, ElementType::kF64});
    ASSERT_NE(comparator, nullptr);
    Builder builder("sort");
    Op keys = builder.Parameter(0, shape, "keys");
    Op values = builder.Parameter(1, shape, "values");
    const Shape s32(ElementType::kS32, shape.dimensions());
    const Op operands[] = {builder.Sin(keys), builder.Iota(s32, 0), builder.Mul(values, keys)};
    Op sorted = builder.Sort(operands, *comparator, dimension, /*is_stable=*/true);
    const Op results[] = {builder.GetTupleElement(sorted, 0), builder.GetTupleElement(sorted, 1),
                          builder.Exp(builder.GetTupleElement(sorted, 2))};
    builder.Tuple(results);
    KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
    ExpectGradientsMatchFiniteDifferences(
        *module, {0, 1}, {RandomF64(shape, random), RandomF64(shape, random)}, static_cast<uint32_t>(trial));
  }
}

TEST(AutodiffSortTest, TopKLargestAndSmallest) {
  std::mt19937 random(3);
  for (int trial = 0; trial < 6; ++trial) {
    const Shape shape = RandomF64Shape(random);
    const int64_t k = std::uniform_int_distribution<int64_t>(1, shape.dimensions(shape.rank() - 1))(random);
    const bool largest = trial % 2 == 0;
    SCOPED_TRACE(shape.ToString() + " k " + std::to_string(k) + (largest ? " largest" : " smallest"));
    Builder builder("top_k");
    Op x = builder.Parameter(0, shape, "x");
    Op top = builder.TopK(builder.Sin(x), k, largest);
    const Op results[] = {builder.Mul(builder.GetTupleElement(top, 0), builder.GetTupleElement(top, 0)),
                          builder.GetTupleElement(top, 1)};
    builder.Tuple(results);
    KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
    ExpectGradientsMatchFiniteDifferences(*module, {0}, {RandomF64(shape, random)},
                                          static_cast<uint32_t>(trial));
  }
}

}  // namespace
}  // namespace kiln
