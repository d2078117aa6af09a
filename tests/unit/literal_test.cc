// Literals: construction, text, conversion with XLA convert semantics,
// reshape and equality.
#include "core/literal.h"

#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

namespace kiln {
namespace {

TEST(Literal, ZeroFilledFromShape) {
  const Literal literal(Shape(ElementType::kF32, {2, 3}));
  EXPECT_EQ(literal.element_count(), 6);
  EXPECT_EQ(literal.raw().size(), 24u);
  for (float v : literal.data<float>()) EXPECT_EQ(v, 0.0f);
}

TEST(Literal, ScalarAndVector) {
  const Literal scalar = Literal::Scalar<int32_t>(42);
  EXPECT_EQ(scalar.shape(), Shape::Scalar(ElementType::kS32));
  EXPECT_EQ(scalar.data<int32_t>()[0], 42);
  const Literal vector = Literal::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(vector.shape(), Shape(ElementType::kF32, {2, 3}));
  EXPECT_EQ(vector.Get<float>(std::vector<int64_t>{1, 0}), 4.0f);
  EXPECT_EQ(vector.Get<float>(std::vector<int64_t>{0, 2}), 3.0f);
  EXPECT_EQ(vector.LinearIndex(std::vector<int64_t>{1, 2}), 5);
  const Literal one_d = Literal::FromVector<int64_t>({7, 8});
  EXPECT_EQ(one_d.shape(), Shape(ElementType::kS64, {2}));
}

TEST(Literal, SetAndGetAs) {
  Literal literal(Shape(ElementType::kS16, {2, 2}));
  literal.Set<int16_t>(std::vector<int64_t>{1, 1}, -5);
  EXPECT_EQ(literal.GetAsInt64(3), -5);
  EXPECT_EQ(literal.GetAsDouble(3), -5.0);
  EXPECT_EQ(literal.GetAsInt64(0), 0);
  const Literal halves = Literal::FromVector<half>({half(1.5f)});
  EXPECT_EQ(halves.GetAsDouble(0), 1.5);
}

TEST(Literal, FromBytesChecksTheSize) {
  const std::vector<uint8_t> bytes = {1, 0, 0, 0, 2, 0, 0, 0};
  auto good = Literal::FromBytes(Shape(ElementType::kS32, {2}), bytes);
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(*good, Literal::FromVector<int32_t>({1, 2}));
  auto bad = Literal::FromBytes(Shape(ElementType::kS32, {3}), bytes);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(Literal::FromBytes(Shape::Tuple({}), {}).ok());
}

TEST(Literal, Tuples) {
  const Literal tuple =
      Literal::Tuple({Literal::Scalar<float>(1.0f),
                      Literal::Tuple({Literal::FromVector<int32_t>({1, 2}), Literal::Scalar(true)})});
  EXPECT_TRUE(tuple.shape().IsTuple());
  EXPECT_EQ(tuple.shape().ToString(), "(f32[], (s32[2], pred[]))");
  const std::vector<Literal> leaves = tuple.Leaves();
  ASSERT_EQ(leaves.size(), 3u);
  EXPECT_EQ(leaves[1], Literal::FromVector<int32_t>({1, 2}));
  EXPECT_EQ(leaves[2], Literal::Scalar(true));
  // A tuple shape gives a tuple of zero-filled arrays.
  const Literal zeros(Shape::Tuple({Shape(ElementType::kF32, {2}), Shape::Scalar(ElementType::kS8)}));
  ASSERT_EQ(zeros.tuple_elements().size(), 2u);
  EXPECT_EQ(zeros.tuple_elements()[0], Literal::FromVector<float>({0, 0}));
}

TEST(Literal, ToString) {
  EXPECT_EQ(Literal::FromVector<float>({1, 2, 3, 4}, {2, 2}).ToString(), "f32[2,2] {{1, 2}, {3, 4}}");
  EXPECT_EQ(Literal::FromVector<float>({1, 2, 3, 4}, {2, 2}).ToString(false), "{{1, 2}, {3, 4}}");
  EXPECT_EQ(Literal::FromVector<int32_t>({-1, 5, 9}).ToString(), "s32[3] {-1, 5, 9}");
  EXPECT_EQ(Literal::Scalar<int32_t>(5).ToString(), "s32[] 5");
  EXPECT_EQ(Literal::FromVector<bool>({true, false}).ToString(), "pred[2] {true, false}");
  EXPECT_EQ(Literal::FromVector<float>({0.5f, -2.25f}).ToString(false), "{0.5, -2.25}");
  EXPECT_EQ(Literal::FromVector<int8_t>({-3}).ToString(false), "{-3}");
  EXPECT_EQ(Literal::FromVector<uint8_t>({200}).ToString(false), "{200}");
  EXPECT_EQ(Literal(Shape(ElementType::kF32, {0})).ToString(), "f32[0] {}");
  EXPECT_EQ(Literal::FromVector<float>({std::numeric_limits<float>::infinity(),
                                        -std::numeric_limits<float>::infinity(), std::nanf("")})
                .ToString(false),
            "{inf, -inf, nan}");
  EXPECT_EQ(Literal::FromVector<int32_t>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2}).ToString(false),
            "{{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}}");
  EXPECT_EQ(Literal::Tuple({Literal::Scalar<float>(1.0f), Literal::Scalar<int32_t>(2)}).ToString(),
            "(f32[] 1, s32[] 2)");
}

template <typename To, typename From>
std::vector<To> ConvertAll(const std::vector<From>& values) {
  auto converted = Literal::FromVector<From>(values).Convert(TypeOf<To>::value);
  EXPECT_TRUE(converted.ok()) << converted.status().ToString();
  if (!converted.ok()) return {};
  auto data = converted->template data<To>();
  return {data.begin(), data.end()};
}

TEST(LiteralConvert, SeedExampleS32ToF32) {
  // Seed: convert(s32[3]{0, 1, 2}, f32) == f32[3]{0.0, 1.0, 2.0}.
  EXPECT_EQ(ConvertAll<float>(std::vector<int32_t>{0, 1, 2}), (std::vector<float>{0.0f, 1.0f, 2.0f}));
}

TEST(LiteralConvert, FloatToIntTruncatesAndSaturates) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(
      ConvertAll<int32_t>(std::vector<float>{3.7f, -3.7f, 1e10f, -1e10f, inf, -inf}),
      (std::vector<int32_t>{3, -3, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(),
                            std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min()}));
  EXPECT_EQ(ConvertAll<uint8_t>(std::vector<float>{-1.5f, 300.0f, 254.9f}),
            (std::vector<uint8_t>{0, 255, 254}));
  EXPECT_EQ(ConvertAll<int8_t>(std::vector<double>{-1000.0, 127.5}), (std::vector<int8_t>{-128, 127}));
  EXPECT_EQ(ConvertAll<int64_t>(std::vector<double>{1e30}),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::max()}));
}

TEST(LiteralConvert, NanToIntIsZero) {
  EXPECT_EQ(ConvertAll<int32_t>(std::vector<float>{std::nanf("")}), (std::vector<int32_t>{0}));
  EXPECT_EQ(ConvertAll<uint16_t>(std::vector<double>{std::nan("")}), (std::vector<uint16_t>{0}));
  EXPECT_EQ(ConvertAll<int32_t>(std::vector<half>{half(std::nanf(""))}), (std::vector<int32_t>{0}));
}

TEST(LiteralConvert, IntToFloatRoundsToNearestEven) {
  // 2^24 + 1 is halfway between 2^24 and 2^24 + 2: ties to the even one.
  EXPECT_EQ(ConvertAll<float>(std::vector<int32_t>{16777217, 16777219, -16777217}),
            (std::vector<float>{16777216.0f, 16777220.0f, -16777216.0f}));
  // 2^53 + 1 in f64.
  EXPECT_EQ(ConvertAll<double>(std::vector<int64_t>{9007199254740993LL}),
            (std::vector<double>{9007199254740992.0}));
  // 2049 is halfway between f16 neighbours 2048 and 2050; 2051 between 2050 and 2052.
  const auto halves = ConvertAll<half>(std::vector<int32_t>{2049, 2051});
  ASSERT_EQ(halves.size(), 2u);
  EXPECT_EQ(static_cast<float>(halves[0]), 2048.0f);
  EXPECT_EQ(static_cast<float>(halves[1]), 2052.0f);
}

TEST(LiteralConvert, HalfAndBfloat16) {
  const auto halves = ConvertAll<half>(std::vector<float>{1.0f / 3.0f, 65504.0f, 65520.0f, -1e6f, 1e-8f});
  ASSERT_EQ(halves.size(), 5u);
  EXPECT_EQ(static_cast<float>(halves[0]), 0.333251953125f);  // nearest f16 to 1/3
  EXPECT_EQ(static_cast<float>(halves[1]), 65504.0f);         // f16 max
  EXPECT_TRUE(std::isinf(static_cast<float>(halves[2])));     // rounds past the max
  EXPECT_EQ(static_cast<float>(halves[3]), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(static_cast<float>(halves[4]), 0.0f);
  // bf16 keeps 7 mantissa bits: 1 + 2^-8 ties to 1; 1 + 3*2^-8 ties to 1 + 2^-6.
  const auto bf16s = ConvertAll<bfloat16>(std::vector<float>{1.00390625f, 1.01171875f, 3e38f});
  ASSERT_EQ(bf16s.size(), 3u);
  EXPECT_EQ(static_cast<float>(bf16s[0]), 1.0f);
  EXPECT_EQ(static_cast<float>(bf16s[1]), 1.015625f);
  EXPECT_FALSE(std::isinf(static_cast<float>(bf16s[2])));  // bf16 has f32's range
  // f16 <-> bf16 and back to f32 keep exactly representable values.
  const auto back = ConvertAll<float>(ConvertAll<bfloat16>(std::vector<half>{half(0.5f), half(-2.0f)}));
  EXPECT_EQ(back, (std::vector<float>{0.5f, -2.0f}));
  EXPECT_EQ(ConvertAll<int32_t>(std::vector<half>{half(2.5f), half(-7.75f)}), (std::vector<int32_t>{2, -7}));
}

TEST(LiteralConvert, IntegersWrapAndPredIsNonZero) {
  EXPECT_EQ(ConvertAll<int8_t>(std::vector<int32_t>{300, -129}), (std::vector<int8_t>{44, 127}));
  EXPECT_EQ(ConvertAll<uint32_t>(std::vector<int32_t>{-1}), (std::vector<uint32_t>{4294967295u}));
  EXPECT_EQ(ConvertAll<bool>(std::vector<float>{0.0f, 2.5f, -0.0f}), (std::vector<bool>{false, true, false}));
  EXPECT_EQ(ConvertAll<int32_t>(std::vector<bool>{true, false}), (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(ConvertAll<float>(std::vector<bool>{true}), (std::vector<float>{1.0f}));
}

TEST(LiteralConvert, ComplexKeepsRealPart) {
  EXPECT_EQ(ConvertAll<float>(std::vector<complex64>{{1.5f, 2.0f}}), (std::vector<float>{1.5f}));
  EXPECT_EQ(ConvertAll<complex64>(std::vector<int32_t>{3}), (std::vector<complex64>{{3.0f, 0.0f}}));
  EXPECT_EQ(ConvertAll<complex128>(std::vector<complex64>{{1.0f, -1.0f}}),
            (std::vector<complex128>{{1.0, -1.0}}));
}

TEST(LiteralConvert, RefusesNonArrays) {
  EXPECT_FALSE(Literal::Tuple({}).Convert(ElementType::kF32).ok());
  EXPECT_FALSE(Literal::Scalar<float>(1.0f).Convert(ElementType::kTuple).ok());
  EXPECT_FALSE(Literal::Scalar<float>(1.0f).Convert(ElementType::kToken).ok());
}

TEST(Literal, Reshape) {
  const Literal literal = Literal::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  auto reshaped = literal.Reshape({3, 2});
  ASSERT_TRUE(reshaped.ok());
  EXPECT_EQ(*reshaped, Literal::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, {3, 2}));
  EXPECT_EQ(reshaped->Get<int32_t>(std::vector<int64_t>{2, 0}), 5);
  auto flat = literal.Reshape({6});
  ASSERT_TRUE(flat.ok());
  EXPECT_EQ(*flat, Literal::FromVector<int32_t>({1, 2, 3, 4, 5, 6}));
  auto scalar = Literal::FromVector<float>({5}, {1, 1}).Reshape({});
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(*scalar, Literal::Scalar<float>(5));
  auto bad = literal.Reshape({4});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(Literal::Tuple({}).Reshape({}).ok());
}

TEST(Literal, Equality) {
  const Literal a = Literal::FromVector<float>({1, 2});
  EXPECT_EQ(a, Literal::FromVector<float>({1, 2}));
  EXPECT_NE(a, Literal::FromVector<float>({1, 3}));
  EXPECT_NE(a, Literal::FromVector<float>({1, 2}, {1, 2}));                // shape differs
  EXPECT_NE(a, Literal::FromVector<double>({1, 2}));                       // type differs
  EXPECT_NE(Literal::Scalar<float>(0.0f), Literal::Scalar<float>(-0.0f));  // bits differ
  const float nan = std::nanf("");
  EXPECT_EQ(Literal::Scalar<float>(nan), Literal::Scalar<float>(nan));  // same bits
  // Layout metadata does not matter.
  Literal column_major = Literal::FromVector<float>({1, 2, 3, 4}, {2, 2});
  Layout layout;
  layout.minor_to_major = {0, 1};
  column_major.set_layout(layout);
  EXPECT_EQ(column_major, Literal::FromVector<float>({1, 2, 3, 4}, {2, 2}));
  EXPECT_EQ(Literal::Tuple({a, Literal::Scalar(true)}), Literal::Tuple({a, Literal::Scalar(true)}));
  EXPECT_NE(Literal::Tuple({a, Literal::Scalar(true)}), Literal::Tuple({a, Literal::Scalar(false)}));
}

}  // namespace
}  // namespace kiln
