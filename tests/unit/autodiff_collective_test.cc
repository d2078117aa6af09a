// Reverse mode through an all-reduce with an add reducer (one replica):
// gradients against f64 central differences, on the interpreter and cpu.
#include <random>

#include "tests/unit/autodiff_gradient_check.h"

namespace kiln {
namespace {

using testing::ExpectGradientsMatchFiniteDifferences;
using testing::RandomF64;
using testing::RandomF64Shape;

TEST(AutodiffCollectiveTest, AllReduceAddOnOneReplica) {
  std::mt19937 random(2);
  KILN_ASSERT_OK_AND_ASSIGN(auto add,
                            testing::ScalarBinaryComputation(Opcode::kAdd, ElementType::kF64, "add"));
  const Shape shape = RandomF64Shape(random);
  Builder builder("all_reduce");
  Op x = builder.Parameter(0, shape, "x");
  builder.Mul(builder.AllReduce(builder.Sin(x), *add), x);
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  ExpectGradientsMatchFiniteDifferences(*module, {0}, {RandomF64(shape, random)});
}

}  // namespace
}  // namespace kiln
