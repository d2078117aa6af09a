// Comparison of result literals within a tolerance (core/literal_compare.h),
// as the conformance harness and `kiln run --compare-with` use it.
#include "core/literal_compare.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace kiln {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kFloatInfinity = std::numeric_limits<float>::infinity();

TEST(LiteralCompareTest, FloatsAgreeWithinRelativeAndAbsoluteTolerance) {
  const Literal expected = Literal::FromVector<float>({100, 0, -2});
  const Literal actual = Literal::FromVector<float>({100.5f, 0.05f, -2});
  const LeafDifference close = CompareLeaf(actual, expected, {1e-2, 0.1});
  EXPECT_TRUE(close.agree()) << close.first_mismatch;
  EXPECT_EQ(close.mismatches, 0);
  EXPECT_FLOAT_EQ(close.max_abs_difference, 0.5);

  const LeafDifference tight = CompareLeaf(actual, expected, {1e-3, 0.01});
  EXPECT_FALSE(tight.agree());
  EXPECT_EQ(tight.mismatches, 2);
  EXPECT_EQ(tight.first_mismatch, "element 0 is 100.5 but expected 100");
}

TEST(LiteralCompareTest, NaNMatchesNaNAndInfinityOnlyItself) {
  const Literal expected = Literal::FromVector<float>({kNaN, kFloatInfinity, -kFloatInfinity});
  EXPECT_TRUE(
      CompareLeaf(Literal::FromVector<float>({kNaN, kFloatInfinity, -kFloatInfinity}), expected, {1, 1})
          .agree());
  const LeafDifference wrong = CompareLeaf(Literal::FromVector<float>({1, 1e30f, kNaN}), expected, {1, 1});
  EXPECT_EQ(wrong.mismatches, 3);
  EXPECT_EQ(wrong.max_abs_difference, 0) << "no pair of finite elements";
}

TEST(LiteralCompareTest, IntegersAndPredsAreExactWhateverTheTolerance) {
  const LeafDifference ints =
      CompareLeaf(Literal::FromVector<int32_t>({1, 2, 4}), Literal::FromVector<int32_t>({1, 3, 4}), {1, 10});
  EXPECT_EQ(ints.mismatches, 1);
  EXPECT_EQ(ints.first_mismatch, "element 1 is 2 but expected 3");
  EXPECT_TRUE(
      CompareLeaf(Literal::FromVector<bool>({true, false}), Literal::FromVector<bool>({true, false}), {})
          .agree());
}

TEST(LiteralCompareTest, ComplexComparesBothParts) {
  const Literal expected = Literal::FromVector<complex64>({{1, 2}});
  EXPECT_TRUE(CompareLeaf(Literal::FromVector<complex64>({{1, 2}}), expected, {0, 0}).agree());
  const LeafDifference imaginary = CompareLeaf(Literal::FromVector<complex64>({{1, -2}}), expected, {0, 0.5});
  EXPECT_EQ(imaginary.first_mismatch, "element 0 is 1-2i but expected 1+2i");
}

TEST(LiteralCompareTest, ShapeOrTypeDifferenceIsAMismatch) {
  const LeafDifference shape =
      CompareLeaf(Literal::FromVector<float>({1, 2}), Literal::FromVector<float>({1, 2, 3}), {1, 1});
  EXPECT_EQ(shape.first_mismatch, "shape f32[2] but expected f32[3]");
  EXPECT_EQ(shape.mismatches, 3);
  EXPECT_FALSE(
      CompareLeaf(Literal::FromVector<double>({1}), Literal::FromVector<float>({1}), {1, 1}).agree());
}

TEST(LiteralCompareTest, LeafToleranceIsExactForIntegersAndTheLooserForFloats) {
  const Tolerance bf16 = ToleranceFor(ElementType::kBF16);
  const Tolerance f32_in_bf16_module = LeafTolerance(ElementType::kF32, bf16);
  EXPECT_EQ(f32_in_bf16_module.rtol, bf16.rtol);
  EXPECT_EQ(f32_in_bf16_module.atol, bf16.atol);
  const Tolerance s32 = LeafTolerance(ElementType::kS32, bf16);
  EXPECT_EQ(s32.rtol, 0);
  EXPECT_EQ(s32.atol, 0);
}

}  // namespace
}  // namespace kiln
