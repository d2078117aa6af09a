// Reverse mode over the elementwise ops: every rule's gradient against f64
// central differences, on random shapes and values (seeded), on the
// interpreter and cpu (tests/unit/autodiff_gradient_check.h).
#include <cmath>
#include <random>

#include "tests/unit/autodiff_gradient_check.h"

namespace kiln {
namespace {

using testing::ExpectGradientsMatchFiniteDifferences;
using testing::RandomF64;
using testing::RandomF64Shape;

struct UnaryCase {
  Opcode opcode;
  double low, high;  // where the function is smooth
};

class UnaryGradientTest : public ::testing::TestWithParam<UnaryCase> {};

TEST_P(UnaryGradientTest, MatchesFiniteDifferences) {
  const UnaryCase& c = GetParam();
  std::mt19937 random(static_cast<uint32_t>(c.opcode) + 7);
  for (int trial = 0; trial < 2; ++trial) {
    const Shape shape = RandomF64Shape(random);
    Builder builder("unary");
    builder.UnaryOp(c.opcode, builder.Parameter(0, shape, "x"));
    KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
    ExpectGradientsMatchFiniteDifferences(*module, {0}, {RandomF64(shape, random, c.low, c.high)},
                                          static_cast<uint32_t>(trial));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Ops, UnaryGradientTest,
    ::testing::Values(UnaryCase{Opcode::kNegate, -2, 2}, UnaryCase{Opcode::kAbs, 0.1, 2},
                      UnaryCase{Opcode::kAbs, -2, -0.1}, UnaryCase{Opcode::kExp, -2, 2},
                      UnaryCase{Opcode::kExpm1, -2, 2}, UnaryCase{Opcode::kLog, 0.2, 3},
                      UnaryCase{Opcode::kLog1p, -0.5, 3}, UnaryCase{Opcode::kTanh, -2, 2},
                      UnaryCase{Opcode::kLogistic, -3, 3}, UnaryCase{Opcode::kSqrt, 0.2, 3},
                      UnaryCase{Opcode::kRsqrt, 0.2, 3}, UnaryCase{Opcode::kCbrt, 0.2, 3},
                      UnaryCase{Opcode::kCbrt, -3, -0.2}, UnaryCase{Opcode::kSin, -3, 3},
                      UnaryCase{Opcode::kCos, -3, 3}, UnaryCase{Opcode::kTan, -1.2, 1.2},
                      UnaryCase{Opcode::kErf, -2, 2}, UnaryCase{Opcode::kSign, -2, 2},
                      UnaryCase{Opcode::kFloor, -2, 2}, UnaryCase{Opcode::kCeil, -2, 2},
                      UnaryCase{Opcode::kRoundNearestAfz, -2, 2}, UnaryCase{Opcode::kRoundNearestEven, -2, 2},
                      UnaryCase{Opcode::kCopy, -2, 2}),
    [](const ::testing::TestParamInfo<UnaryCase>& info) {
      std::string name(OpcodeName(info.param.opcode));
      for (char& ch : name) {
        if (ch == '-') ch = '_';
      }
      return name + "_" + std::to_string(info.index);
    });

struct BinaryCase {
  Opcode opcode;
  double lhs_low, lhs_high, rhs_low, rhs_high;
};

class BinaryGradientTest : public ::testing::TestWithParam<BinaryCase> {};

TEST_P(BinaryGradientTest, MatchesFiniteDifferences) {
  const BinaryCase& c = GetParam();
  std::mt19937 random(static_cast<uint32_t>(c.opcode) + 11);
  for (int trial = 0; trial < 2; ++trial) {
    const Shape shape = RandomF64Shape(random);
    Builder builder("binary");
    builder.BinaryOp(c.opcode, builder.Parameter(0, shape, "a"), builder.Parameter(1, shape, "b"));
    KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
    ExpectGradientsMatchFiniteDifferences(
        *module, {0, 1},
        {RandomF64(shape, random, c.lhs_low, c.lhs_high), RandomF64(shape, random, c.rhs_low, c.rhs_high)},
        static_cast<uint32_t>(trial));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Ops, BinaryGradientTest,
    ::testing::Values(BinaryCase{Opcode::kAdd, -2, 2, -2, 2}, BinaryCase{Opcode::kSubtract, -2, 2, -2, 2},
                      BinaryCase{Opcode::kMultiply, -2, 2, -2, 2}, BinaryCase{Opcode::kDivide, -2, 2, 0.5, 2},
                      BinaryCase{Opcode::kPower, 0.3, 2, -2, 2}, BinaryCase{Opcode::kAtan2, -2, 2, -2, 2},
                      BinaryCase{Opcode::kMaximum, -2, 2, -2, 2}, BinaryCase{Opcode::kMinimum, -2, 2, -2, 2},
                      BinaryCase{Opcode::kRemainder, 0.1, 5, 0.7, 1.3}),
    [](const ::testing::TestParamInfo<BinaryCase>& info) {
      return std::string(OpcodeName(info.param.opcode));
    });

// JAX's convention: on a tie, maximum and minimum give each operand half.
TEST(AutodiffElementwiseTest, MaximumAndMinimumSplitTiesEvenly) {
  for (Opcode opcode : {Opcode::kMaximum, Opcode::kMinimum}) {
    Builder builder("tie");
    const Shape shape(ElementType::kF64, {3});
    builder.BinaryOp(opcode, builder.Parameter(0, shape, "a"), builder.Parameter(1, shape, "b"));
    KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
    KILN_ASSERT_OK_AND_ASSIGN(auto vjp, autodiff::BuildVjp(*module, std::vector<int64_t>{0, 1}));
    const Literal a = Literal::FromVector<double>({1.0, 2.0, 5.0});
    const Literal b = Literal::FromVector<double>({3.0, 2.0, 4.0});
    const Literal g = Literal::FromVector<double>({10.0, 10.0, 10.0});
    const Literal inputs[] = {a, b, g};
    KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Run(*vjp, inputs));
    const bool max = opcode == Opcode::kMaximum;
    EXPECT_EQ(result.tuple_elements()[1],
              Literal::FromVector<double>({max ? 0.0 : 10.0, 5.0, max ? 10.0 : 0.0}));
    EXPECT_EQ(result.tuple_elements()[2],
              Literal::FromVector<double>({max ? 10.0 : 0.0, 5.0, max ? 0.0 : 10.0}));
  }
}

// Where a derivative is undefined, JAX's choice: |x|' = 1 at 0, and 0^b
// has no gradient in b (log 0 read as 0).
TEST(AutodiffElementwiseTest, JaxConventionsAtSingularPoints) {
  const Shape shape(ElementType::kF64, {3});
  Builder builder("singular");
  Op a = builder.Parameter(0, shape, "a");
  Op b = builder.Parameter(1, shape, "b");
  builder.Tuple(std::vector<Op>{builder.Abs(a), builder.Pow(a, b)});
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  KILN_ASSERT_OK_AND_ASSIGN(auto vjp, autodiff::BuildVjp(*module, std::vector<int64_t>{0, 1}));
  const Literal ones = Literal::FromVector<double>({1, 1, 1});
  const Literal zeros = Literal::FromVector<double>({0, 0, 0});
  {
    const Literal inputs[] = {Literal::FromVector<double>({0.0, -0.0, -2.0}),
                              Literal::FromVector<double>({2, 3, 2}), ones, zeros};
    KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Run(*vjp, inputs));
    EXPECT_EQ(result.tuple_elements()[2], Literal::FromVector<double>({1.0, 1.0, -1.0}));
  }
  {
    const Literal inputs[] = {Literal::FromVector<double>({0.0, 0.0, 2.0}),
                              Literal::FromVector<double>({2, 3, 0}), zeros, ones};
    KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Run(*vjp, inputs));
    EXPECT_EQ(result.tuple_elements()[3], Literal::FromVector<double>({0.0, 0.0, std::log(2.0)}));
  }
}

TEST(AutodiffElementwiseTest, SelectSendsTheCotangentToTheChosenSide) {
  std::mt19937 random(3);
  const Shape shape(ElementType::kF64, {2, 3});
  Builder builder("select");
  Op a = builder.Parameter(0, shape, "a");
  Op b = builder.Parameter(1, shape, "b");
  Op p = builder.Parameter(2, shape, "p");
  builder.Select(builder.Gt(p, builder.ConstantR0<double>(0.0)), a, b);
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  ExpectGradientsMatchFiniteDifferences(
      *module, {0, 1}, {RandomF64(shape, random), RandomF64(shape, random), RandomF64(shape, random)});
}

TEST(AutodiffElementwiseTest, ClampWithArrayAndScalarBounds) {
  std::mt19937 random(4);
  const Shape shape(ElementType::kF64, {4, 3});
  {
    Builder builder("clamp_arrays");
    builder.Clamp(builder.Parameter(0, shape, "lo"), builder.Parameter(1, shape, "x"),
                  builder.Parameter(2, shape, "hi"));
    KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
    ExpectGradientsMatchFiniteDifferences(
        *module, {0, 1, 2},
        {RandomF64(shape, random, -1.5, 0.0), RandomF64(shape, random, -2, 2),
         RandomF64(shape, random, 0.0, 1.5)});
  }
  {
    Builder builder("clamp_scalars");
    const Shape scalar(ElementType::kF64, {});
    builder.Clamp(builder.Parameter(0, scalar, "lo"), builder.Parameter(1, shape, "x"),
                  builder.Parameter(2, scalar, "hi"));
    KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
    ExpectGradientsMatchFiniteDifferences(
        *module, {0, 1, 2},
        {Literal::Scalar<double>(-0.5), RandomF64(shape, random, -2, 2), Literal::Scalar<double>(0.7)});
  }
}

TEST(AutodiffElementwiseTest, ConvertCarriesGradientsBetweenFloatsOnly) {
  const Shape shape(ElementType::kF64, {5});
  std::mt19937 random(5);
  {
    // f64 -> f32 -> f64 is the identity up to rounding: steps large enough
    // for f32, and a tolerance to match.
    Builder builder("float_round_trip");
    Op x = builder.Parameter(0, shape, "x");
    Op narrow = builder.ConvertElementType(builder.Mul(x, x), ElementType::kF32);
    builder.ConvertElementType(builder.Exp(narrow), ElementType::kF64);
    KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
    ExpectGradientsMatchFiniteDifferences(*module, {0}, {RandomF64(shape, random, -1, 1)}, 1,
                                          testing::GradientTolerance{1e-2, 1e-3});
  }
  {
    // Through an integer: no gradient, and no error.
    Builder builder("through_integer");
    Op x = builder.Parameter(0, shape, "x");
    Op integer =
        builder.ConvertElementType(builder.Mul(x, builder.ConstantR0<double>(10.0)), ElementType::kS32);
    builder.Add(builder.ConvertElementType(integer, ElementType::kF64), x);
    KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
    KILN_ASSERT_OK_AND_ASSIGN(auto vjp, autodiff::BuildVjp(*module, std::vector<int64_t>{0}));
    const Literal inputs[] = {Literal::FromVector<double>({0.25, 1.5, -2.0, 3.0, 0.0}),
                              Literal::FromVector<double>({1, 2, 3, 4, 5})};
    KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Run(*vjp, inputs));
    EXPECT_EQ(result.tuple_elements()[1], Literal::FromVector<double>({1, 2, 3, 4, 5}));
  }
}

// A value used three times gets the sum of the three contributions.
TEST(AutodiffElementwiseTest, FanOutAccumulates) {
  std::mt19937 random(6);
  const Shape shape(ElementType::kF64, {3, 2});
  Builder builder("fan_out");
  Op x = builder.Parameter(0, shape, "x");
  Op y = builder.Parameter(1, shape, "y");
  builder.Add(builder.Mul(x, builder.Sin(x)), builder.Div(x, builder.Exp(y)));
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  ExpectGradientsMatchFiniteDifferences(*module, {0, 1},
                                        {RandomF64(shape, random), RandomF64(shape, random)});
  // The same parameter twice in wrt: the same gradient twice.
  ExpectGradientsMatchFiniteDifferences(*module, {1, 0, 1},
                                        {RandomF64(shape, random), RandomF64(shape, random)});
}

}  // namespace
}  // namespace kiln
