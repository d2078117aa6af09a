// Worked examples of the operation-semantics seed for elementwise ops:
// Clamp, ConvertElementType, binary arithmetic (with broadcast_dimensions),
// comparisons, unary functions, Select, ReducePrecision, Map.
#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "tests/unit/test_util.h"

namespace kiln {
namespace {

using Dims = std::vector<int64_t>;
using kiln::testing::RunsTo;

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(SeedClamp, ScalarMinAndMax) {
  // Clamp(operand = s32[3]{-1, 5, 9}, min = 0, max = 6) = s32[3]{0, 5, 6}.
  Builder b("clamp");
  const Op operand = b.Parameter(0, Shape(ElementType::kS32, {3}), "operand");
  b.Clamp(b.ConstantR0<int32_t>(0), operand, b.ConstantR0<int32_t>(6));
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<int32_t>({0, 5, 6}),
                     std::vector<Literal>{Literal::FromVector<int32_t>({-1, 5, 9})}));
}

TEST(SeedClamp, ArrayMinAndMax) {
  Builder b("clamp");
  b.Clamp(b.ConstantR1<float>({0, 0, 10}), b.ConstantR1<float>({-1, 5, 9}), b.ConstantR1<float>({6, 4, 20}));
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({0, 4, 10})));
}

TEST(SeedClamp, RefusesMismatchedShapes) {
  Builder b("clamp");
  b.Clamp(b.ConstantR1<float>({0, 0}), b.ConstantR1<float>({-1, 5, 9}), b.ConstantR0<float>(6));
  EXPECT_FALSE(b.first_error().ok());
}

TEST(SeedConvertElementType, S32ToF32) {
  Builder b("convert");
  b.ConvertElementType(b.Parameter(0, Shape(ElementType::kS32, {3}), "a"), ElementType::kF32);
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({0.0f, 1.0f, 2.0f}),
                     std::vector<Literal>{Literal::FromVector<int32_t>({0, 1, 2})}));
}

TEST(SeedConvertElementType, IntToFloatRoundsToNearestEven) {
  Builder b("convert");
  b.ConvertElementType(b.ConstantR1<int32_t>({16777217, 16777219}), ElementType::kF32);
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({16777216.0f, 16777220.0f})));
}

TEST(SeedConvertElementType, FloatToIntSaturatesAndNanIsZero) {
  Builder b("convert");
  b.ConvertElementType(b.ConstantR1<float>({2.9f, -2.9f, 1e20f, -1e20f, std::nanf("")}), ElementType::kS32);
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<int32_t>({2, -2, std::numeric_limits<int32_t>::max(),
                                                      std::numeric_limits<int32_t>::min(), 0})));
}

TEST(SeedConvertElementType, RefusesTupleTarget) {
  Builder b("convert");
  b.ConvertElementType(b.ConstantR1<int32_t>({1}), ElementType::kTuple);
  EXPECT_FALSE(b.first_error().ok());
}

// Runs a binary op over two f32 vectors of equal shape.
void ExpectBinaryF32(Opcode opcode, const std::vector<float>& lhs, const std::vector<float>& rhs,
                     const std::vector<float>& expected) {
  Builder b("binary");
  const Op x = b.Parameter(0, Shape(ElementType::kF32, {static_cast<int64_t>(lhs.size())}), "x");
  const Op y = b.Parameter(1, Shape(ElementType::kF32, {static_cast<int64_t>(rhs.size())}), "y");
  b.BinaryOp(opcode, x, y);
  const std::vector<Literal> args = {Literal::FromVector<float>(lhs), Literal::FromVector<float>(rhs)};
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>(expected), args, 1e-6)) << OpcodeName(opcode);
}

TEST(SeedElementwiseBinary, Arithmetic) {
  const std::vector<float> x = {1, -2, 7.5f, 0};
  const std::vector<float> y = {4, 3, -2, 5};
  ExpectBinaryF32(Opcode::kAdd, x, y, {5, 1, 5.5f, 5});
  ExpectBinaryF32(Opcode::kSubtract, x, y, {-3, -5, 9.5f, -5});
  ExpectBinaryF32(Opcode::kMultiply, x, y, {4, -6, -15, 0});
  ExpectBinaryF32(Opcode::kDivide, x, y, {0.25f, -2.0f / 3.0f, -3.75f, 0});
  ExpectBinaryF32(Opcode::kMaximum, x, y, {4, 3, 7.5f, 5});
  ExpectBinaryF32(Opcode::kMinimum, x, y, {1, -2, -2, 0});
}

TEST(SeedElementwiseBinary, RemainderTakesTheSignOfTheDividend) {
  ExpectBinaryF32(Opcode::kRemainder, {5.5f, -5.5f, 5.5f, -5.5f}, {2, 2, -2, -2}, {1.5f, -1.5f, 1.5f, -1.5f});
  Builder b("rem");
  b.Rem(b.ConstantR1<int32_t>({7, -7, 7, -7}), b.ConstantR1<int32_t>({3, 3, -3, -3}));
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<int32_t>({1, -1, 1, -1})));
}

TEST(SeedElementwiseBinary, IntegerDivisionTruncates) {
  Builder b("div");
  b.Div(b.ConstantR1<int32_t>({7, -7, 7, -7}), b.ConstantR1<int32_t>({2, 2, -2, -2}));
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<int32_t>({3, -3, -3, 3})));
}

TEST(SeedElementwiseBinary, LogicalAndOr) {
  const Literal p = Literal::FromVector<bool>({true, true, false, false});
  const Literal q = Literal::FromVector<bool>({true, false, true, false});
  {
    Builder b("and");
    b.And(b.ConstantLiteral(p), b.ConstantLiteral(q));
    EXPECT_TRUE(RunsTo(b, Literal::FromVector<bool>({true, false, false, false})));
  }
  {
    Builder b("or");
    b.Or(b.ConstantLiteral(p), b.ConstantLiteral(q));
    EXPECT_TRUE(RunsTo(b, Literal::FromVector<bool>({true, true, true, false})));
  }
}

TEST(SeedElementwiseBinary, ScalarOperandBroadcasts) {
  Builder b("add");
  b.Add(b.Parameter(0, Shape(ElementType::kF32, {2, 2}), "m"), b.ConstantR0<float>(10));
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({11, 12, 13, 14}, {2, 2}),
                     std::vector<Literal>{Literal::FromVector<float>({1, 2, 3, 4}, {2, 2})}));
}

TEST(SeedElementwiseBinary, BroadcastDimensionsMapVectorToColumns) {
  // Matrix [2x3] + vector [3] with broadcast_dimensions {1}: added to each row.
  Builder b("add");
  const Op m = b.ConstantLiteral(Literal::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3}));
  b.Add(m, b.ConstantR1<float>({10, 20, 30}), Dims{1});
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({11, 22, 33, 14, 25, 36}, {2, 3})));
}

TEST(SeedElementwiseBinary, BroadcastDimensionsMapVectorToRows) {
  // Matrix [2x3] + vector [2] with broadcast_dimensions {0}: added to each column.
  Builder b("add");
  const Op m = b.ConstantLiteral(Literal::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3}));
  b.Add(m, b.ConstantR1<float>({100, 200}), Dims{0});
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({101, 102, 103, 204, 205, 206}, {2, 3})));
}

TEST(SeedElementwiseBinary, BroadcastLowerRankOperandOnTheLeft) {
  // The lower-rank operand may be the lhs too.
  Builder b("sub");
  const Op m = b.ConstantLiteral(Literal::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3}));
  b.Sub(b.ConstantR1<float>({100, 200}), m, Dims{0});
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({99, 98, 97, 196, 195, 194}, {2, 3})));
}

TEST(SeedElementwiseBinary, BroadcastMatrixIntoRank3) {
  // [2x3] mapped to dimensions {1, 2} of [2x2x3].
  Builder b("mul");
  const Op cube =
      b.ConstantLiteral(Literal::FromVector<int32_t>({1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2}, {2, 2, 3}));
  b.Mul(cube, b.ConstantLiteral(Literal::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3})), Dims{1, 2});
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<int32_t>({1, 2, 3, 4, 5, 6, 2, 4, 6, 8, 10, 12}, {2, 2, 3})));
}

TEST(SeedElementwiseBinary, DegenerateDimensionsBroadcast) {
  // [2x1] + [1x3] -> [2x3] through size-1 dimensions.
  Builder b("add");
  b.Add(b.ConstantLiteral(Literal::FromVector<float>({1, 2}, {2, 1})),
        b.ConstantLiteral(Literal::FromVector<float>({10, 20, 30}, {1, 3})));
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({11, 21, 31, 12, 22, 32}, {2, 3})));
}

TEST(SeedElementwiseBinary, RefusesIncompatibleShapes) {
  {
    Builder b("add");
    b.Add(b.ConstantR1<float>({1, 2}), b.ConstantR1<float>({1, 2, 3}));
    EXPECT_FALSE(b.first_error().ok());
  }
  {
    Builder b("add");
    const Op m = b.ConstantLiteral(Literal::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3}));
    b.Add(m, b.ConstantR1<float>({1, 2, 3}), Dims{0});  // dimension 0 has size 2
    EXPECT_FALSE(b.first_error().ok());
  }
  {
    Builder b("add");
    b.Add(b.ConstantR1<float>({1, 2}), b.ConstantR1<int32_t>({1, 2}));
    EXPECT_FALSE(b.first_error().ok());
  }
}

TEST(SeedElementwiseCompare, AllDirections) {
  const Literal x = Literal::FromVector<int32_t>({1, 2, 3});
  const Literal y = Literal::FromVector<int32_t>({3, 2, 1});
  struct Case {
    ComparisonDirection direction;
    std::vector<bool> expected;
  };
  const std::vector<Case> cases = {
      {ComparisonDirection::kEq, {false, true, false}}, {ComparisonDirection::kNe, {true, false, true}},
      {ComparisonDirection::kGe, {false, true, true}},  {ComparisonDirection::kGt, {false, false, true}},
      {ComparisonDirection::kLe, {true, true, false}},  {ComparisonDirection::kLt, {true, false, false}}};
  for (const Case& c : cases) {
    Builder b("compare");
    b.Compare(b.Parameter(0, x.shape(), "x"), b.Parameter(1, y.shape(), "y"), c.direction);
    EXPECT_TRUE(RunsTo(b, Literal::FromVector<bool>(c.expected), std::vector<Literal>{x, y}))
        << static_cast<int>(c.direction);
  }
}

TEST(SeedElementwiseCompare, NamedComparisons) {
  Builder b("compare");
  const Op x = b.ConstantR1<float>({1, 2, 3});
  const Op y = b.ConstantR1<float>({3, 2, 1});
  b.Tuple(std::vector<Op>{b.Eq(x, y), b.Ne(x, y), b.Ge(x, y), b.Gt(x, y), b.Le(x, y), b.Lt(x, y)});
  EXPECT_TRUE(RunsTo(
      b, Literal::Tuple(
             {Literal::FromVector<bool>({false, true, false}), Literal::FromVector<bool>({true, false, true}),
              Literal::FromVector<bool>({false, true, true}), Literal::FromVector<bool>({false, false, true}),
              Literal::FromVector<bool>({true, true, false}),
              Literal::FromVector<bool>({true, false, false})})));
}

TEST(SeedElementwiseCompare, Ieee754FloatSemantics) {
  // NaN is unordered: only Ne is true; -0 == +0.
  Builder b("compare");
  const Op x = b.ConstantR1<float>({std::nanf(""), -0.0f, -kInf});
  const Op y = b.ConstantR1<float>({std::nanf(""), 0.0f, -kInf});
  b.Tuple(std::vector<Op>{b.Eq(x, y), b.Ne(x, y), b.Lt(x, y), b.Ge(x, y)});
  EXPECT_TRUE(RunsTo(b, Literal::Tuple({Literal::FromVector<bool>({false, true, true}),
                                        Literal::FromVector<bool>({true, false, false}),
                                        Literal::FromVector<bool>({false, false, false}),
                                        Literal::FromVector<bool>({false, true, true})})));
}

TEST(SeedElementwiseCompare, BroadcastDimensions) {
  Builder b("compare");
  const Op m = b.ConstantLiteral(Literal::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3}));
  b.Gt(m, b.ConstantR1<int32_t>({2, 4}), Dims{0});
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<bool>({false, false, true, false, true, true}, {2, 3})));
}

TEST(SeedElementwiseCompare, UnsignedComparesAsUnsigned) {
  Builder b("compare");
  b.Lt(b.ConstantR1<uint32_t>({1, 0xFFFFFFFFu}), b.ConstantR1<uint32_t>({0xFFFFFFFFu, 1}));
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<bool>({true, false})));
}

// Applies `make` to a parameter holding `input` and compares with `expected`.
template <typename Make>
void ExpectUnaryF32(const char* what, Make make, const std::vector<float>& input,
                    const std::vector<float>& expected, double tolerance = 1e-6) {
  Builder b(what);
  make(b, b.Parameter(0, Shape(ElementType::kF32, {static_cast<int64_t>(input.size())}), "x"));
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>(expected),
                     std::vector<Literal>{Literal::FromVector<float>(input)}, tolerance))
      << what;
}

TEST(SeedElementwiseUnary, Functions) {
  const std::vector<float> x = {-2.5f, -0.5f, 0.0f, 0.5f, 1.0f, 3.25f};
  ExpectUnaryF32("abs", [](Builder& b, Op v) { b.Abs(v); }, x, {2.5f, 0.5f, 0, 0.5f, 1, 3.25f});
  ExpectUnaryF32("ceil", [](Builder& b, Op v) { b.Ceil(v); }, x, {-2, -0.0f, 0, 1, 1, 4});
  ExpectUnaryF32("floor", [](Builder& b, Op v) { b.Floor(v); }, x, {-3, -1, 0, 0, 1, 3});
  ExpectUnaryF32("neg", [](Builder& b, Op v) { b.Neg(v); }, x, {2.5f, 0.5f, -0.0f, -0.5f, -1, -3.25f});
  ExpectUnaryF32("sign", [](Builder& b, Op v) { b.Sign(v); }, x, {-1, -1, 0, 1, 1, 1});
  std::vector<float> cos_x, exp_x, tanh_x;
  for (float v : x) {
    cos_x.push_back(std::cos(v));
    exp_x.push_back(std::exp(v));
    tanh_x.push_back(std::tanh(v));
  }
  ExpectUnaryF32("cos", [](Builder& b, Op v) { b.Cos(v); }, x, cos_x);
  ExpectUnaryF32("exp", [](Builder& b, Op v) { b.Exp(v); }, x, exp_x);
  ExpectUnaryF32("tanh", [](Builder& b, Op v) { b.Tanh(v); }, x, tanh_x);
  ExpectUnaryF32("log", [](Builder& b, Op v) { b.Log(v); }, {1.0f, std::exp(2.0f), 0.5f, 0.0f},
                 {0.0f, 2.0f, std::log(0.5f), -kInf});
}

TEST(SeedElementwiseUnary, LogOfNegativeIsNan) {
  Builder b("log");
  b.IsFinite(b.Log(b.ConstantR1<float>({-1.0f, 1.0f})));
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<bool>({false, true})));
}

TEST(SeedElementwiseUnary, SignOfIntegers) {
  Builder b("sign");
  b.Sign(b.ConstantR1<int32_t>({-7, 0, 3}));
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<int32_t>({-1, 0, 1})));
}

TEST(SeedElementwiseUnary, AbsAndNegOfIntegers) {
  Builder b("abs");
  const Op x = b.ConstantR1<int32_t>({-7, 0, 3});
  b.Tuple(std::vector<Op>{b.Abs(x), b.Neg(x)});
  EXPECT_TRUE(RunsTo(b, Literal::Tuple({Literal::FromVector<int32_t>({7, 0, 3}),
                                        Literal::FromVector<int32_t>({7, 0, -3})})));
}

TEST(SeedElementwiseUnary, IsFinite) {
  Builder b("is_finite");
  const Op x = b.Parameter(0, Shape(ElementType::kF32, {5}), "x");
  const Op finite = b.IsFinite(x);
  KILN_ASSERT_OK_AND_ASSIGN(Shape shape, b.GetShape(finite));
  EXPECT_EQ(shape, Shape(ElementType::kPred, {5}));
  EXPECT_TRUE(
      RunsTo(b, Literal::FromVector<bool>({true, false, false, false, true}),
             std::vector<Literal>{Literal::FromVector<float>({1.0f, kInf, -kInf, std::nanf(""), -0.0f})}));
}

TEST(SeedElementwiseUnary, LogicalNot) {
  Builder b("not");
  b.Not(b.ConstantR1<bool>({true, false}));
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<bool>({false, true})));
}

TEST(SeedElementwiseUnary, ScalarOperand) {
  Builder b("neg");
  b.Neg(b.ConstantR0<float>(4.0f));
  EXPECT_TRUE(RunsTo(b, Literal::Scalar<float>(-4.0f)));
}

TEST(SeedSelect, ArrayPredicate) {
  Builder b("select");
  const Op pred = b.Parameter(0, Shape(ElementType::kPred, {4}), "pred");
  b.Select(pred, b.ConstantR1<int32_t>({1, 2, 3, 4}), b.ConstantR1<int32_t>({100, 200, 300, 400}));
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<int32_t>({1, 200, 300, 4}),
                     std::vector<Literal>{Literal::FromVector<bool>({true, false, false, true})}));
}

TEST(SeedSelect, ScalarPredicate) {
  for (bool value : {true, false}) {
    Builder b("select");
    const Op pred = b.Parameter(0, Shape::Scalar(ElementType::kPred), "pred");
    b.Select(pred, b.ConstantR1<int32_t>({1, 2, 3, 4}), b.ConstantR1<int32_t>({100, 200, 300, 400}));
    const Literal expected = value ? Literal::FromVector<int32_t>({1, 2, 3, 4})
                                   : Literal::FromVector<int32_t>({100, 200, 300, 400});
    EXPECT_TRUE(RunsTo(b, expected, std::vector<Literal>{Literal::Scalar(value)})) << value;
  }
}

TEST(SeedSelect, TuplesWithScalarPredicate) {
  // The seed allows selecting between tuples of equal shape with a scalar PRED.
  Builder b("select");
  const Op on_true = b.Tuple(std::vector<Op>{b.ConstantR0<float>(1), b.ConstantR1<int32_t>({1, 2})});
  const Op on_false = b.Tuple(std::vector<Op>{b.ConstantR0<float>(2), b.ConstantR1<int32_t>({3, 4})});
  b.Select(b.ConstantR0<bool>(false), on_true, on_false);
  EXPECT_TRUE(RunsTo(b, Literal::Tuple({Literal::Scalar<float>(2), Literal::FromVector<int32_t>({3, 4})})));
}

TEST(SeedSelect, RefusesMismatchedShapes) {
  {
    Builder b("select");
    b.Select(b.ConstantR1<bool>({true, false}), b.ConstantR1<int32_t>({1, 2}),
             b.ConstantR1<int32_t>({1, 2, 3}));
    EXPECT_FALSE(b.first_error().ok());
  }
  {
    Builder b("select");
    b.Select(b.ConstantR1<int32_t>({1, 0}), b.ConstantR1<int32_t>({1, 2}), b.ConstantR1<int32_t>({3, 4}));
    EXPECT_FALSE(b.first_error().ok()) << "the predicate must be PRED";
  }
}

TEST(SeedReducePrecision, RoundsMantissaToNearestEven) {
  // f16-like format: 5 exponent bits, 10 mantissa bits.
  const float one_plus_half_ulp = 1.0f + std::ldexp(1.0f, -11);             // tie -> 1
  const float one_plus_three_half_ulps = 1.0f + 3 * std::ldexp(1.0f, -11);  // tie -> 1 + 2^-9
  Builder b("reduce_precision");
  b.ReducePrecision(b.Parameter(0, Shape(ElementType::kF32, {4}), "x"), 5, 10);
  EXPECT_TRUE(RunsTo(
      b, Literal::FromVector<float>({1.0f, 1.0f + std::ldexp(1.0f, -9), 0.333251953125f, -2.0f}),
      std::vector<Literal>{
          Literal::FromVector<float>({one_plus_half_ulp, one_plus_three_half_ulps, 1.0f / 3.0f, -2.0f})}));
}

TEST(SeedReducePrecision, OverflowGoesToInfinityAndNanStaysNan) {
  Builder b("reduce_precision");
  b.ReducePrecision(b.ConstantR1<float>({70000.0f, -70000.0f, 65504.0f, kInf, std::nanf("")}), 5, 10);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, kiln::testing::BuildAndRun(b));
  ASSERT_EQ(result.element_count(), 5);
  const auto values = result.data<float>();
  EXPECT_EQ(values[0], kInf);
  EXPECT_EQ(values[1], -kInf);
  EXPECT_EQ(values[2], 65504.0f);
  EXPECT_EQ(values[3], kInf);
  EXPECT_TRUE(std::isnan(values[4]));
}

TEST(SeedReducePrecision, WiderThanTheTypeIsANoOp) {
  const std::vector<float> x = {1.0f / 3.0f, 1e30f, -7.123456f, 1e-30f};
  Builder b("reduce_precision");
  b.ReducePrecision(b.ConstantR1<float>(x), 11, 52);
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>(x)));
}

TEST(SeedReducePrecision, RefusesZeroExponentBits) {
  Builder b("reduce_precision");
  b.ReducePrecision(b.ConstantR1<float>({1}), 0, 10);
  EXPECT_FALSE(b.first_error().ok());
}

TEST(SeedMap, AppliesTheComputationToEachElement) {
  // computation(a, b) = a * b + 1, mapped over two [2x2] arrays.
  Builder fn("mul_add_one");
  const Op a = fn.Parameter(0, Shape::Scalar(ElementType::kF32), "a");
  const Op c = fn.Parameter(1, Shape::Scalar(ElementType::kF32), "b");
  fn.Add(fn.Mul(a, c), fn.ConstantR0<float>(1));
  KILN_ASSERT_OK_AND_ASSIGN(auto computation, fn.Build());

  Builder b("map");
  const Op x = b.Parameter(0, Shape(ElementType::kF32, {2, 2}), "x");
  const Op y = b.Parameter(1, Shape(ElementType::kF32, {2, 2}), "y");
  b.Map(std::vector<Op>{x, y}, *computation, Dims{0, 1});
  const std::vector<Literal> args = {Literal::FromVector<float>({1, 2, 3, 4}, {2, 2}),
                                     Literal::FromVector<float>({5, 6, 7, 8}, {2, 2})};
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({6, 13, 22, 33}, {2, 2}), args));
}

TEST(SeedMap, OutputElementTypeIsTheComputationsResult) {
  // computation: T -> S with S = PRED (x > 2).
  Builder fn("greater_than_two");
  fn.Gt(fn.Parameter(0, Shape::Scalar(ElementType::kS32), "x"), fn.ConstantR0<int32_t>(2));
  KILN_ASSERT_OK_AND_ASSIGN(auto computation, fn.Build());
  Builder b("map");
  b.Map(std::vector<Op>{b.ConstantR1<int32_t>({1, 2, 3, 4})}, *computation, Dims{0});
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<bool>({false, false, true, true})));
}

TEST(SeedMap, RefusesArityMismatch) {
  KILN_ASSERT_OK_AND_ASSIGN(auto add,
                            kiln::testing::ScalarBinaryComputation(Opcode::kAdd, ElementType::kF32, "add"));
  Builder b("map");
  b.Map(std::vector<Op>{b.ConstantR1<float>({1, 2})}, *add, Dims{0});
  EXPECT_FALSE(b.first_error().ok());
}

}  // namespace
}  // namespace kiln
