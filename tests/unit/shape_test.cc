// Shapes and layouts as seed 002 describes them: dimension numbering,
// negative dimensions, minor_to_major, padded dimensions, text forms.
#include "core/shape.h"

#include <gtest/gtest.h>

#include "core/element_type.h"

namespace kiln {
namespace {

Shape WithLayout(Shape shape, std::vector<int64_t> minor_to_major, std::vector<int64_t> padded = {}) {
  Layout layout;
  layout.minor_to_major = std::move(minor_to_major);
  layout.padded_dimensions = std::move(padded);
  shape.set_layout(std::move(layout));
  return shape;
}

TEST(Shape, DimensionsAreListedInDimensionNumberOrder) {
  // MakeShape(F32, {A, B, C, D}): dimension i has the i-th size.
  const Shape shape(ElementType::kF32, {2, 3, 5, 7});
  EXPECT_EQ(shape.rank(), 4);
  EXPECT_EQ(shape.dimensions(0), 2);
  EXPECT_EQ(shape.dimensions(1), 3);
  EXPECT_EQ(shape.dimensions(2), 5);
  EXPECT_EQ(shape.dimensions(3), 7);
  EXPECT_EQ(shape.element_count(), 210);
  EXPECT_EQ(shape.byte_size(), 840);
}

TEST(Shape, DefaultLayoutIsMajorToMinor) {
  const Shape shape(ElementType::kF32, {2, 3, 4});
  EXPECT_EQ(shape.layout().minor_to_major, (std::vector<int64_t>{2, 1, 0}));
  EXPECT_TRUE(shape.HasDefaultLayout());
  EXPECT_EQ(DefaultLayout(0).minor_to_major, std::vector<int64_t>{});
  EXPECT_EQ(DefaultLayout(2).minor_to_major, (std::vector<int64_t>{1, 0}));
  EXPECT_FALSE(WithLayout(shape, {0, 1, 2}).HasDefaultLayout());
  EXPECT_FALSE(WithLayout(shape, {2, 1, 0}, {2, 3, 8}).HasDefaultLayout());
}

TEST(Shape, NegativeDimensionsCountFromTheEnd) {
  // For a 3-D [A x B x C] array, -1 is C, -2 is B, -3 is A.
  auto last = CanonicalizeDimension(-1, 3, "test");
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(*last, 2);
  auto middle = CanonicalizeDimension(-2, 3, "test");
  ASSERT_TRUE(middle.ok());
  EXPECT_EQ(*middle, 1);
  auto first = CanonicalizeDimension(-3, 3, "test");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, 0);
  auto positive = CanonicalizeDimension(1, 3, "test");
  ASSERT_TRUE(positive.ok());
  EXPECT_EQ(*positive, 1);
}

TEST(Shape, OutOfRangeDimensionsAreRefused) {
  for (int64_t bad : {-4, 3, 100, -100}) {
    auto result = CanonicalizeDimension(bad, 3, "reverse");
    ASSERT_FALSE(result.ok()) << bad;
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(result.status().message().find("reverse"), std::string::npos) << result.status().message();
  }
  EXPECT_FALSE(CanonicalizeDimension(0, 0, "scalar").ok());
}

TEST(Shape, ValidateLayoutAcceptsPermutationsAndPadding) {
  const Shape shape(ElementType::kF32, {2, 3});
  EXPECT_TRUE(ValidateLayout(shape).ok());
  EXPECT_TRUE(ValidateLayout(WithLayout(shape, {0, 1})).ok());
  EXPECT_TRUE(ValidateLayout(WithLayout(shape, {0, 1}, {3, 5})).ok());
  EXPECT_TRUE(ValidateLayout(WithLayout(shape, {1, 0}, {2, 3})).ok());
  EXPECT_TRUE(ValidateLayout(Shape::Scalar(ElementType::kS32)).ok());
  EXPECT_TRUE(ValidateLayout(Shape::Token()).ok());
}

TEST(Shape, ValidateLayoutRefusesBadLayouts) {
  const Shape shape(ElementType::kF32, {2, 3});
  const std::vector<Shape> bad = {
      WithLayout(shape, {0}),             // too few dimensions
      WithLayout(shape, {0, 1, 2}),       // too many
      WithLayout(shape, {1, 1}),          // repeated
      WithLayout(shape, {0, 2}),          // out of range
      WithLayout(shape, {-1, 0}),         // negative
      WithLayout(shape, {1, 0}, {3}),     // padded rank mismatch
      WithLayout(shape, {1, 0}, {1, 3}),  // padded smaller than logical
  };
  for (const Shape& candidate : bad) {
    const Status status = ValidateLayout(candidate);
    EXPECT_FALSE(status.ok()) << candidate.ToString(true);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find("f32[2,3]"), std::string::npos) << status.message();
  }
  // A bad leaf inside a tuple is found too.
  EXPECT_FALSE(
      ValidateLayout(Shape::Tuple({Shape::Scalar(ElementType::kF32), WithLayout(shape, {1, 1})})).ok());
}

TEST(Shape, ToStringMatchesHloText) {
  EXPECT_EQ(Shape(ElementType::kF32, {2, 3}).ToString(), "f32[2,3]");
  EXPECT_EQ(Shape(ElementType::kF32, {2, 3}).ToString(true), "f32[2,3]{1,0}");
  EXPECT_EQ(WithLayout(Shape(ElementType::kF32, {2, 3}), {0, 1}).ToString(true), "f32[2,3]{0,1}");
  EXPECT_EQ(Shape::Scalar(ElementType::kPred).ToString(), "pred[]");
  EXPECT_EQ(Shape(ElementType::kBF16, {7}).ToString(), "bf16[7]");
  EXPECT_EQ(Shape::Tuple({Shape::Scalar(ElementType::kF32), Shape(ElementType::kS32, {4})}).ToString(),
            "(f32[], s32[4])");
  EXPECT_EQ(Shape::Tuple({}).ToString(), "()");
  EXPECT_EQ(Shape::Token().ToString(), "token[]");
  EXPECT_EQ(Layout{}.ToString(), "{}");
}

TEST(Shape, EqualityAndCompatibility) {
  const Shape row_major(ElementType::kF32, {2, 3});
  const Shape column_major = WithLayout(row_major, {0, 1});
  EXPECT_TRUE(row_major.Compatible(column_major));
  EXPECT_NE(row_major, column_major);
  EXPECT_EQ(row_major, Shape(ElementType::kF32, {2, 3}));
  EXPECT_FALSE(row_major.Compatible(Shape(ElementType::kF32, {3, 2})));
  EXPECT_FALSE(row_major.Compatible(Shape(ElementType::kS32, {2, 3})));
  const Shape tuple = Shape::Tuple({row_major, Shape::Scalar(ElementType::kS32)});
  EXPECT_TRUE(tuple.Compatible(Shape::Tuple({column_major, Shape::Scalar(ElementType::kS32)})));
  EXPECT_FALSE(tuple.Compatible(Shape::Tuple({row_major})));
}

TEST(Shape, TupleLeavesAreFlattenedInOrder) {
  const Shape a(ElementType::kF32, {2});
  const Shape b(ElementType::kS32, {});
  const Shape c(ElementType::kU8, {3, 3});
  const Shape nested = Shape::Tuple({a, Shape::Tuple({b, c}), Shape::Tuple({})});
  const std::vector<Shape> leaves = nested.Leaves();
  ASSERT_EQ(leaves.size(), 3u);
  EXPECT_EQ(leaves[0], a);
  EXPECT_EQ(leaves[1], b);
  EXPECT_EQ(leaves[2], c);
  EXPECT_EQ(nested.element_count(), 0);
  EXPECT_EQ(nested.byte_size(), 0);
}

TEST(Shape, PaddedByteSizeCountsThePaddedBox) {
  const Shape padded = WithLayout(Shape(ElementType::kF32, {2, 3}), {0, 1}, {3, 5});
  EXPECT_EQ(padded.element_count(), 6);
  EXPECT_EQ(padded.byte_size(), 15 * 4);
}

TEST(ElementType, NamesRoundTrip) {
  const ElementType all[] = {ElementType::kPred, ElementType::kS8,  ElementType::kS16,  ElementType::kS32,
                             ElementType::kS64,  ElementType::kU8,  ElementType::kU16,  ElementType::kU32,
                             ElementType::kU64,  ElementType::kF16, ElementType::kBF16, ElementType::kF32,
                             ElementType::kF64,  ElementType::kC64, ElementType::kC128, ElementType::kTuple,
                             ElementType::kToken};
  for (ElementType type : all) {
    const std::string_view name = ElementTypeName(type);
    ASSERT_FALSE(name.empty());
    auto back = ElementTypeFromName(name);
    ASSERT_TRUE(back.has_value()) << name;
    EXPECT_EQ(*back, type) << name;
  }
  EXPECT_EQ(ElementTypeName(ElementType::kPred), "pred");
  EXPECT_EQ(ElementTypeName(ElementType::kBF16), "bf16");
  EXPECT_EQ(ElementTypeName(ElementType::kC64), "c64");
  EXPECT_EQ(ElementTypeName(ElementType::kF32), "f32");
  EXPECT_FALSE(ElementTypeFromName("f31").has_value());
  EXPECT_FALSE(ElementTypeFromName("").has_value());
}

TEST(ElementType, Properties) {
  EXPECT_EQ(ByteWidth(ElementType::kPred), 1);
  EXPECT_EQ(ByteWidth(ElementType::kBF16), 2);
  EXPECT_EQ(ByteWidth(ElementType::kC128), 16);
  EXPECT_EQ(ByteWidth(ElementType::kTuple), 0);
  EXPECT_EQ(BitWidth(ElementType::kS64), 64);
  EXPECT_TRUE(IsSignedIntegral(ElementType::kS8));
  EXPECT_FALSE(IsSignedIntegral(ElementType::kU8));
  EXPECT_TRUE(IsUnsignedIntegral(ElementType::kU64));
  EXPECT_FALSE(IsIntegral(ElementType::kPred));
  EXPECT_TRUE(IsFloating(ElementType::kBF16));
  EXPECT_FALSE(IsFloating(ElementType::kC64));
  EXPECT_TRUE(IsComplex(ElementType::kC128));
  EXPECT_EQ(ComplexComponentType(ElementType::kC64), ElementType::kF32);
  EXPECT_EQ(ComplexComponentType(ElementType::kC128), ElementType::kF64);
  EXPECT_EQ(MantissaBits(ElementType::kF16), 10);
  EXPECT_EQ(ExponentBits(ElementType::kF16), 5);
  EXPECT_EQ(MantissaBits(ElementType::kBF16), 7);
  EXPECT_EQ(ExponentBits(ElementType::kBF16), 8);
  EXPECT_EQ(MantissaBits(ElementType::kF32), 23);
  EXPECT_EQ(ExponentBits(ElementType::kF64), 11);
  EXPECT_FALSE(IsArrayType(ElementType::kToken));
  EXPECT_FALSE(IsArrayType(ElementType::kInvalid));
  EXPECT_TRUE(IsArrayType(ElementType::kPred));
}

}  // namespace
}  // namespace kiln
