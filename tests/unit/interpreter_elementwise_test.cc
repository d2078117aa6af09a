// Elementwise semantics of the interpreter, especially XLA's edge rules.
#include <cmath>
#include <cstring>
#include <limits>

#include "tests/unit/test_util.h"

namespace kiln {
namespace {

using testing::BuildAndRun;
using testing::LiteralNear;

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

Literal RunBinary(Opcode opcode, const Literal& lhs, const Literal& rhs) {
  Builder builder("binary");
  builder.BinaryOp(opcode, builder.ConstantLiteral(lhs), builder.ConstantLiteral(rhs));
  StatusOr<Literal> result = BuildAndRun(builder);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *result : Literal();
}

Literal RunUnary(Opcode opcode, const Literal& operand) {
  Builder builder("unary");
  builder.UnaryOp(opcode, builder.ConstantLiteral(operand));
  StatusOr<Literal> result = BuildAndRun(builder);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *result : Literal();
}

TEST(InterpreterElementwiseTest, SignedIntegerDivisionEdgeCases) {
  const int32_t min = std::numeric_limits<int32_t>::min();
  const Literal lhs = Literal::FromVector<int32_t>({7, -7, 5, min, min, 9});
  const Literal rhs = Literal::FromVector<int32_t>({2, 2, 0, -1, 0, -4});
  EXPECT_EQ(RunBinary(Opcode::kDivide, lhs, rhs), Literal::FromVector<int32_t>({3, -3, -1, min, -1, -2}));
  EXPECT_EQ(RunBinary(Opcode::kRemainder, lhs, rhs), Literal::FromVector<int32_t>({1, -1, 5, 0, min, 1}));
}

TEST(InterpreterElementwiseTest, UnsignedDivisionByZeroIsAllOnes) {
  const Literal lhs = Literal::FromVector<uint8_t>({200, 7});
  const Literal rhs = Literal::FromVector<uint8_t>({0, 2});
  EXPECT_EQ(RunBinary(Opcode::kDivide, lhs, rhs), Literal::FromVector<uint8_t>({255, 3}));
  EXPECT_EQ(RunBinary(Opcode::kRemainder, lhs, rhs), Literal::FromVector<uint8_t>({200, 1}));
}

TEST(InterpreterElementwiseTest, FloatRemainderTakesTheDividendSign) {
  const Literal result = RunBinary(Opcode::kRemainder, Literal::FromVector<float>({5.5f, -5.5f, 5.5f, -5.5f}),
                                   Literal::FromVector<float>({2.0f, 2.0f, -2.0f, -2.0f}));
  EXPECT_EQ(result, Literal::FromVector<float>({1.5f, -1.5f, 1.5f, -1.5f}));
}

TEST(InterpreterElementwiseTest, IntegerOverflowWraps) {
  const int32_t max = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(RunBinary(Opcode::kAdd, Literal::FromVector<int32_t>({max}), Literal::FromVector<int32_t>({1})),
            Literal::FromVector<int32_t>({std::numeric_limits<int32_t>::min()}));
  EXPECT_EQ(RunBinary(Opcode::kMultiply, Literal::FromVector<uint16_t>({65535}),
                      Literal::FromVector<uint16_t>({65535})),
            Literal::FromVector<uint16_t>({1}));
  EXPECT_EQ(RunUnary(Opcode::kNegate, Literal::FromVector<int8_t>({-128, 5})),
            Literal::FromVector<int8_t>({-128, -5}));
  EXPECT_EQ(RunUnary(Opcode::kAbs, Literal::FromVector<int8_t>({-128, -5})),
            Literal::FromVector<int8_t>({-128, 5}));
}

TEST(InterpreterElementwiseTest, ShiftsWithOutOfRangeAmounts) {
  const Literal values = Literal::FromVector<int32_t>({-16, -16, 16, 1, -1, 3});
  const Literal amounts = Literal::FromVector<int32_t>({2, 32, 40, 31, -1, 0});
  EXPECT_EQ(RunBinary(Opcode::kShiftLeft, values, amounts),
            Literal::FromVector<int32_t>({-64, 0, 0, std::numeric_limits<int32_t>::min(), 0, 3}));
  EXPECT_EQ(RunBinary(Opcode::kShiftRightArithmetic, values, amounts),
            Literal::FromVector<int32_t>({-4, -1, 0, 0, -1, 3}));
  EXPECT_EQ(RunBinary(Opcode::kShiftRightLogical, values, amounts),
            Literal::FromVector<int32_t>({static_cast<int32_t>(0xFFFFFFF0u >> 2), 0, 0, 0, 0, 3}));
}

TEST(InterpreterElementwiseTest, ArithmeticShiftOfUnsignedFillsWithTheTopBit) {
  EXPECT_EQ(RunBinary(Opcode::kShiftRightArithmetic, Literal::FromVector<uint8_t>({0x80, 0x40, 0x80}),
                      Literal::FromVector<uint8_t>({1, 1, 9})),
            Literal::FromVector<uint8_t>({0xC0, 0x20, 0xFF}));
}

TEST(InterpreterElementwiseTest, MaxAndMinPropagateNaN) {
  const Literal lhs = Literal::FromVector<float>({kNan, 1.0f, 2.0f, -kInf});
  const Literal rhs = Literal::FromVector<float>({1.0f, kNan, 3.0f, 0.0f});
  const Literal max = RunBinary(Opcode::kMaximum, lhs, rhs);
  const Literal min = RunBinary(Opcode::kMinimum, lhs, rhs);
  EXPECT_TRUE(std::isnan(max.data<float>()[0]));
  EXPECT_TRUE(std::isnan(max.data<float>()[1]));
  EXPECT_EQ(max.data<float>()[2], 3.0f);
  EXPECT_EQ(max.data<float>()[3], 0.0f);
  EXPECT_TRUE(std::isnan(min.data<float>()[0]));
  EXPECT_TRUE(std::isnan(min.data<float>()[1]));
  EXPECT_EQ(min.data<float>()[2], 2.0f);
  EXPECT_EQ(min.data<float>()[3], -kInf);
}

TEST(InterpreterElementwiseTest, RoundingModes) {
  const Literal values = Literal::FromVector<float>({0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 2.4f, -2.6f});
  EXPECT_EQ(RunUnary(Opcode::kRoundNearestAfz, values),
            Literal::FromVector<float>({1.0f, 2.0f, 3.0f, -1.0f, -3.0f, 2.0f, -3.0f}));
  EXPECT_EQ(RunUnary(Opcode::kRoundNearestEven, values),
            Literal::FromVector<float>({0.0f, 2.0f, 2.0f, -0.0f, -2.0f, 2.0f, -3.0f}));
  EXPECT_EQ(RunUnary(Opcode::kFloor, values), Literal::FromVector<float>({0, 1, 2, -1, -3, 2, -3}));
  EXPECT_EQ(RunUnary(Opcode::kCeil, values), Literal::FromVector<float>({1, 2, 3, -0.0f, -2, 3, -2}));
}

TEST(InterpreterElementwiseTest, ReducePrecisionRoundsToNearestEvenAndOverflows) {
  Builder builder("reduce_precision");
  // To bf16's format (8 exponent, 7 mantissa bits) and to f16's (5, 10).
  const Literal input = Literal::FromVector<float>(
      {1.0f + 0x1.0p-8f, 1.0f + 0x3.0p-8f, 1.0f + 0x1.0p-9f, 70000.0f, 1e-6f, kNan, -kInf});
  Op x = builder.ConstantLiteral(input);
  Op bf16_like = builder.ReducePrecision(x, 8, 7);
  Op f16_like = builder.ReducePrecision(x, 5, 10);
  const Op outputs[] = {bf16_like, f16_like};
  builder.Tuple(outputs);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  auto bf16 = result.tuple_elements()[0].data<float>();
  EXPECT_EQ(bf16[0], 1.0f);              // tie rounds to even (down)
  EXPECT_EQ(bf16[1], 1.0f + 0x4.0p-8f);  // tie rounds to even (up)
  EXPECT_EQ(bf16[2], 1.0f);              // below half rounds down
  EXPECT_EQ(bf16[3], 70144.0f);          // representable range kept
  EXPECT_TRUE(std::isnan(bf16[5]));
  EXPECT_EQ(bf16[6], -kInf);
  auto f16 = result.tuple_elements()[1].data<float>();
  EXPECT_EQ(f16[3], kInf);  // 70000 overflows f16's exponent
  EXPECT_EQ(f16[4], 0.0f);  // below f16's normal range flushes to zero
  EXPECT_TRUE(std::isnan(f16[5]));
  // Agrees with a real conversion to half for a normal value.
  EXPECT_EQ(f16[0], static_cast<float>(half(1.0f + 0x1.0p-8f)));
}

TEST(InterpreterElementwiseTest, ConvertSaturatesAndRoundsToNearestEven) {
  Builder builder("convert");
  Op floats = builder.ConstantLiteral(Literal::FromVector<float>({1e10f, -1e10f, kNan, 2.9f, -2.9f, 300.0f}));
  Op to_s32 = builder.ConvertElementType(floats, ElementType::kS32);
  Op to_u8 = builder.ConvertElementType(floats, ElementType::kU8);
  // 2^24 + 1 is not representable in f32: rounds to even (2^24).
  Op big = builder.ConstantLiteral(Literal::FromVector<int32_t>({16777217, 16777219, -1}));
  Op to_f32 = builder.ConvertElementType(big, ElementType::kF32);
  Op wrapped = builder.ConvertElementType(big, ElementType::kU8);
  const Op outputs[] = {to_s32, to_u8, to_f32, wrapped};
  builder.Tuple(outputs);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  const int32_t max = std::numeric_limits<int32_t>::max();
  const int32_t min = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(result.tuple_elements()[0], Literal::FromVector<int32_t>({max, min, 0, 2, -2, 300}));
  EXPECT_EQ(result.tuple_elements()[1], Literal::FromVector<uint8_t>({255, 0, 0, 2, 0, 255}));
  EXPECT_EQ(result.tuple_elements()[2], Literal::FromVector<float>({16777216.0f, 16777220.0f, -1.0f}));
  EXPECT_EQ(result.tuple_elements()[3], Literal::FromVector<uint8_t>({1, 3, 255}));
}

TEST(InterpreterElementwiseTest, HalfAndBfloat16ArithmeticRoundsOnce) {
  const Literal a = Literal::FromVector<half>({half(1.0f), half(65504.0f), half(0.1f)});
  const Literal b = Literal::FromVector<half>({half(0x1.0p-11f), half(65504.0f), half(0.2f)});
  const Literal sum = RunBinary(Opcode::kAdd, a, b);
  EXPECT_EQ(static_cast<float>(sum.data<half>()[0]), 1.0f);  // tie to even
  EXPECT_TRUE(std::isinf(static_cast<float>(sum.data<half>()[1])));
  EXPECT_EQ(sum.data<half>()[2], half(static_cast<float>(half(0.1f)) + static_cast<float>(half(0.2f))));
  const Literal c = Literal::FromVector<bfloat16>({bfloat16(3.0f), bfloat16(-8.0f)});
  const Literal d = Literal::FromVector<bfloat16>({bfloat16(7.0f), bfloat16(0.5f)});
  EXPECT_EQ(RunBinary(Opcode::kMultiply, c, d),
            Literal::FromVector<bfloat16>({bfloat16(21.0f), bfloat16(-4.0f)}));
  const Literal root = RunUnary(Opcode::kSqrt, Literal::FromVector<bfloat16>({bfloat16(4.0f)}));
  EXPECT_EQ(root, Literal::FromVector<bfloat16>({bfloat16(2.0f)}));
}

TEST(InterpreterElementwiseTest, IntegerPower) {
  const Literal base = Literal::FromVector<int32_t>({2, 3, -2, 1, 5, 0, 2});
  const Literal exponent = Literal::FromVector<int32_t>({10, 3, 3, -5, -1, 0, 31});
  EXPECT_EQ(RunBinary(Opcode::kPower, base, exponent),
            Literal::FromVector<int32_t>({1024, 27, -8, 1, 0, 1, std::numeric_limits<int32_t>::min()}));
}

TEST(InterpreterElementwiseTest, FloatPowerAndAtan2) {
  const Literal result = RunBinary(Opcode::kPower, Literal::FromVector<float>({2.0f, 9.0f, 0.0f}),
                                   Literal::FromVector<float>({-1.0f, 0.5f, 0.0f}));
  EXPECT_TRUE(LiteralNear(Literal::FromVector<float>({0.5f, 3.0f, 1.0f}), result, 1e-6));
  const Literal angles = RunBinary(Opcode::kAtan2, Literal::FromVector<double>({1.0, -1.0, 0.0}),
                                   Literal::FromVector<double>({1.0, -1.0, -1.0}));
  EXPECT_TRUE(LiteralNear(Literal::FromVector<double>({M_PI / 4, -3 * M_PI / 4, M_PI}), angles, 1e-12));
}

TEST(InterpreterElementwiseTest, BitCountsAndNot) {
  EXPECT_EQ(RunUnary(Opcode::kClz, Literal::FromVector<int32_t>({0, 1, -1, 0x00010000})),
            Literal::FromVector<int32_t>({32, 31, 0, 15}));
  EXPECT_EQ(RunUnary(Opcode::kClz, Literal::FromVector<uint8_t>({0, 1, 0x80})),
            Literal::FromVector<uint8_t>({8, 7, 0}));
  EXPECT_EQ(RunUnary(Opcode::kPopcnt, Literal::FromVector<int16_t>({0, 7, -1})),
            Literal::FromVector<int16_t>({0, 3, 16}));
  EXPECT_EQ(RunUnary(Opcode::kNot, Literal::FromVector<uint8_t>({0x0F})),
            Literal::FromVector<uint8_t>({0xF0}));
  EXPECT_EQ(RunUnary(Opcode::kNot, Literal::FromVector<bool>({true, false})),
            Literal::FromVector<bool>({false, true}));
  EXPECT_EQ(RunBinary(Opcode::kXor, Literal::FromVector<bool>({true, true}),
                      Literal::FromVector<bool>({true, false})),
            Literal::FromVector<bool>({false, true}));
}

TEST(InterpreterElementwiseTest, SignOfEveryKind) {
  EXPECT_EQ(RunUnary(Opcode::kSign, Literal::FromVector<int32_t>({-5, 0, 9})),
            Literal::FromVector<int32_t>({-1, 0, 1}));
  const Literal signs = RunUnary(Opcode::kSign, Literal::FromVector<float>({-2.0f, -0.0f, 0.0f, 3.0f, kNan}));
  EXPECT_EQ(signs.data<float>()[0], -1.0f);
  EXPECT_TRUE(std::signbit(signs.data<float>()[1]));
  EXPECT_FALSE(std::signbit(signs.data<float>()[2]));
  EXPECT_EQ(signs.data<float>()[3], 1.0f);
  EXPECT_TRUE(std::isnan(signs.data<float>()[4]));
  const Literal complex_sign =
      RunUnary(Opcode::kSign, Literal::FromVector<complex64>({{3.0f, 4.0f}, {0.0f, 0.0f}}));
  EXPECT_TRUE(LiteralNear(Literal::FromVector<complex64>({{0.6f, 0.8f}, {0.0f, 0.0f}}), complex_sign, 1e-6));
}

TEST(InterpreterElementwiseTest, TranscendentalFunctions) {
  const Literal x = Literal::FromVector<double>({0.5, -1.0, 2.0});
  struct Case {
    Opcode opcode;
    double (*reference)(double);
  };
  const Case cases[] = {
      {Opcode::kExp, [](double v) { return std::exp(v); }},
      {Opcode::kExpm1, [](double v) { return std::expm1(v); }},
      {Opcode::kLog1p, [](double v) { return std::log1p(v); }},
      {Opcode::kTanh, [](double v) { return std::tanh(v); }},
      {Opcode::kSin, [](double v) { return std::sin(v); }},
      {Opcode::kCos, [](double v) { return std::cos(v); }},
      {Opcode::kTan, [](double v) { return std::tan(v); }},
      {Opcode::kErf, [](double v) { return std::erf(v); }},
      {Opcode::kCbrt, [](double v) { return std::cbrt(v); }},
      {Opcode::kLogistic, [](double v) { return 1.0 / (1.0 + std::exp(-v)); }},
  };
  for (const Case& c : cases) {
    std::vector<double> expected;
    for (double v : {0.5, -1.0, 2.0}) expected.push_back(c.reference(v));
    EXPECT_TRUE(LiteralNear(Literal::FromVector<double>(expected), RunUnary(c.opcode, x), 1e-14))
        << OpcodeName(c.opcode);
  }
  const Literal rsqrt = RunUnary(Opcode::kRsqrt, Literal::FromVector<float>({4.0f, 0.25f}));
  EXPECT_TRUE(LiteralNear(Literal::FromVector<float>({0.5f, 2.0f}), rsqrt, 1e-6));
}

TEST(InterpreterElementwiseTest, ComplexOps) {
  Builder builder("complex");
  Op re = builder.ConstantR1<float>({1.0f, -2.0f});
  Op im = builder.ConstantR1<float>({2.0f, 0.5f});
  Op z = builder.Complex(re, im);
  Op product = builder.Mul(z, z);
  const Op outputs[] = {product, builder.Real(product), builder.Imag(product), builder.Abs(z),
                        builder.Exp(z)};
  builder.Tuple(outputs);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  const complex64 a(1.0f, 2.0f), b(-2.0f, 0.5f);
  EXPECT_TRUE(LiteralNear(Literal::FromVector<complex64>({a * a, b * b}), result.tuple_elements()[0], 1e-6));
  EXPECT_TRUE(LiteralNear(Literal::FromVector<float>({(a * a).real(), (b * b).real()}),
                          result.tuple_elements()[1], 1e-6));
  EXPECT_TRUE(LiteralNear(Literal::FromVector<float>({(a * a).imag(), (b * b).imag()}),
                          result.tuple_elements()[2], 1e-6));
  EXPECT_TRUE(
      LiteralNear(Literal::FromVector<float>({std::abs(a), std::abs(b)}), result.tuple_elements()[3], 1e-6));
  EXPECT_TRUE(LiteralNear(Literal::FromVector<complex64>({std::exp(a), std::exp(b)}),
                          result.tuple_elements()[4], 1e-6));
}

TEST(InterpreterElementwiseTest, IsFiniteAndCompareTotalOrder) {
  Builder builder("finite");
  Op x = builder.ConstantR1<float>({1.0f, kInf, kNan, -0.0f});
  Op y = builder.ConstantR1<float>({1.0f, kInf, kNan, 0.0f});
  const Op outputs[] = {builder.IsFinite(x), builder.Eq(x, y),
                        builder.Compare(x, y, ComparisonDirection::kEq, ComparisonType::kTotalOrder),
                        builder.Compare(x, y, ComparisonDirection::kLt, ComparisonType::kTotalOrder)};
  builder.Tuple(outputs);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result.tuple_elements()[0], Literal::FromVector<bool>({true, false, false, true}));
  EXPECT_EQ(result.tuple_elements()[1], Literal::FromVector<bool>({true, true, false, true}));
  EXPECT_EQ(result.tuple_elements()[2], Literal::FromVector<bool>({true, true, true, false}));
  EXPECT_EQ(result.tuple_elements()[3], Literal::FromVector<bool>({false, false, false, true}));
}

TEST(InterpreterElementwiseTest, BitcastConvertSameAndChangingWidth) {
  Builder builder("bitcast");
  Op floats = builder.ConstantR1<float>({1.0f, -2.0f});
  Op same = builder.BitcastConvertType(floats, ElementType::kU32);
  Op narrower = builder.BitcastConvertType(floats, ElementType::kU16);  // f32[2] -> u16[2,2]
  Op wider = builder.BitcastConvertType(narrower, ElementType::kF32);   // back to f32[2]
  const Op outputs[] = {same, narrower, wider};
  builder.Tuple(outputs);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result.tuple_elements()[0], Literal::FromVector<uint32_t>({0x3F800000u, 0xC0000000u}));
  EXPECT_EQ(result.tuple_elements()[1],
            Literal::FromVector<uint16_t>({0x0000, 0x3F80, 0x0000, 0xC000}, {2, 2}));
  EXPECT_EQ(result.tuple_elements()[2], Literal::FromVector<float>({1.0f, -2.0f}));
}

TEST(InterpreterElementwiseTest, SelectAndClampWithScalars) {
  Builder builder("select_clamp");
  Op pred = builder.ConstantR1<bool>({true, false, true});
  Op a = builder.ConstantR1<int32_t>({1, 2, 3});
  Op b = builder.ConstantR1<int32_t>({10, 20, 30});
  Op low = builder.ConstantR0<int32_t>(2);
  Op high = builder.ConstantR0<int32_t>(15);
  const Op outputs[] = {builder.Select(pred, a, b), builder.Clamp(low, b, high), builder.Clamp(low, a, high)};
  builder.Tuple(outputs);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result.tuple_elements()[0], Literal::FromVector<int32_t>({1, 20, 3}));
  EXPECT_EQ(result.tuple_elements()[1], Literal::FromVector<int32_t>({10, 15, 15}));
  EXPECT_EQ(result.tuple_elements()[2], Literal::FromVector<int32_t>({2, 2, 3}));
}

TEST(InterpreterElementwiseTest, UnsignedAndSmallTypesBinaryOps) {
  EXPECT_EQ(
      RunBinary(Opcode::kSubtract, Literal::FromVector<uint32_t>({1}), Literal::FromVector<uint32_t>({2})),
      Literal::FromVector<uint32_t>({0xFFFFFFFFu}));
  EXPECT_EQ(RunBinary(Opcode::kMaximum, Literal::FromVector<int64_t>({-5, 7}),
                      Literal::FromVector<int64_t>({3, 2})),
            Literal::FromVector<int64_t>({3, 7}));
  EXPECT_EQ(RunBinary(Opcode::kAnd, Literal::FromVector<uint64_t>({0xFF00}),
                      Literal::FromVector<uint64_t>({0x0FF0})),
            Literal::FromVector<uint64_t>({0x0F00}));
  EXPECT_EQ(
      RunBinary(Opcode::kDivide, Literal::FromVector<double>({1.0}), Literal::FromVector<double>({0.0})),
      Literal::FromVector<double>({std::numeric_limits<double>::infinity()}));
}

}  // namespace
}  // namespace kiln
