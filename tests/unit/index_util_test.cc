// IndexUtil and the row-major <-> layout copies, against seed 002's pictures
// of a [2 x 3] array `a b c / d e f` in memory.
#include "core/index_util.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kiln {
namespace {

Shape WithLayout(Shape shape, std::vector<int64_t> minor_to_major, std::vector<int64_t> padded = {},
                 PaddingValue padding_value = PaddingValue::kInvalid) {
  Layout layout;
  layout.minor_to_major = std::move(minor_to_major);
  layout.padded_dimensions = std::move(padded);
  layout.padding_value = padding_value;
  shape.set_layout(std::move(layout));
  return shape;
}

// The seed's letters as U8 values; '0' marks padding in the pictures.
std::vector<uint8_t> Letters(const std::string& text) { return {text.begin(), text.end()}; }
std::string AsText(const std::vector<uint8_t>& bytes) {
  std::string text;
  for (uint8_t b : bytes) text.push_back(b == 0 ? '0' : static_cast<char>(b));
  return text;
}

const Shape kTwoByThree(ElementType::kU8, {2, 3});

TEST(SeedLayout, MinorToMajor01IsColumnMajor) {
  const Shape shape = WithLayout(kTwoByThree, {0, 1});
  EXPECT_EQ(AsText(RowMajorToLayout(shape, Letters("abcdef"))), "adbecf");
}

TEST(SeedLayout, MinorToMajor10IsRowMajor) {
  const Shape shape = WithLayout(kTwoByThree, {1, 0});
  EXPECT_EQ(AsText(RowMajorToLayout(shape, Letters("abcdef"))), "abcdef");
}

TEST(SeedLayout, PaddedColumnMajor) {
  // [2 x 3] padded to [3, 5], column-major, padding value 0.
  const Shape shape = WithLayout(kTwoByThree, {0, 1}, {3, 5}, PaddingValue::kZero);
  EXPECT_EQ(AsText(RowMajorToLayout(shape, Letters("abcdef"))), "ad0be0cf0000000");
}

TEST(SeedLayout, PaddedColumnMajorEqualsThePaddedPicture) {
  // The seed's equivalent picture: a 3x5 array `abc00 / def00 / 00000` in the
  // same minor-to-major order has the same memory.
  const Shape padded = WithLayout(kTwoByThree, {0, 1}, {3, 5}, PaddingValue::kZero);
  const Shape picture = WithLayout(Shape(ElementType::kU8, {3, 5}), {0, 1});
  std::vector<uint8_t> picture_rows = Letters("abc00def0000000");
  for (auto& b : picture_rows) b = b == '0' ? 0 : b;
  EXPECT_EQ(RowMajorToLayout(padded, Letters("abcdef")), RowMajorToLayout(picture, picture_rows));
}

TEST(SeedLayout, PaddedRoundTrip) {
  const Shape shape = WithLayout(kTwoByThree, {0, 1}, {3, 5}, PaddingValue::kZero);
  const auto physical = RowMajorToLayout(shape, Letters("abcdef"));
  EXPECT_EQ(AsText(LayoutToRowMajor(shape, physical)), "abcdef");
}

TEST(SeedLayout, PaddingValueFillsThePadding) {
  const Shape shape = WithLayout(Shape(ElementType::kS32, {1, 2}), {1, 0}, {2, 3}, PaddingValue::kOne);
  const std::vector<int32_t> values = {7, 8};
  const auto physical = RowMajorToLayout(
      shape, {reinterpret_cast<const uint8_t*>(values.data()), values.size() * sizeof(int32_t)});
  ASSERT_EQ(physical.size(), 6 * sizeof(int32_t));
  std::vector<int32_t> out(6);
  std::memcpy(out.data(), physical.data(), physical.size());
  EXPECT_EQ(out, (std::vector<int32_t>{7, 8, 1, 1, 1, 1}));
}

TEST(IndexUtil, MultiToLinearRowMajor) {
  const Shape shape(ElementType::kF32, {2, 3, 4});
  EXPECT_EQ(IndexUtil::MultiIndexToLinear(shape, std::vector<int64_t>{0, 0, 0}), 0);
  EXPECT_EQ(IndexUtil::MultiIndexToLinear(shape, std::vector<int64_t>{0, 0, 1}), 1);
  EXPECT_EQ(IndexUtil::MultiIndexToLinear(shape, std::vector<int64_t>{0, 1, 0}), 4);
  EXPECT_EQ(IndexUtil::MultiIndexToLinear(shape, std::vector<int64_t>{1, 0, 0}), 12);
  EXPECT_EQ(IndexUtil::MultiIndexToLinear(shape, std::vector<int64_t>{1, 2, 3}), 23);
}

TEST(IndexUtil, MultiToLinearColumnMajor) {
  const Shape shape = WithLayout(Shape(ElementType::kF32, {2, 3, 4}), {0, 1, 2});
  EXPECT_EQ(IndexUtil::MultiIndexToLinear(shape, std::vector<int64_t>{1, 0, 0}), 1);
  EXPECT_EQ(IndexUtil::MultiIndexToLinear(shape, std::vector<int64_t>{0, 1, 0}), 2);
  EXPECT_EQ(IndexUtil::MultiIndexToLinear(shape, std::vector<int64_t>{0, 0, 1}), 6);
  EXPECT_EQ(IndexUtil::MultiIndexToLinear(shape, std::vector<int64_t>{1, 2, 3}), 1 + 4 + 18);
}

TEST(IndexUtil, MultiToLinearMixedLayout) {
  // minor_to_major {1, 2, 0}: dim 1 fastest (size 3), then dim 2 (size 4), then dim 0.
  const Shape shape = WithLayout(Shape(ElementType::kF32, {2, 3, 4}), {1, 2, 0});
  EXPECT_EQ(IndexUtil::MultiIndexToLinear(shape, std::vector<int64_t>{0, 1, 0}), 1);
  EXPECT_EQ(IndexUtil::MultiIndexToLinear(shape, std::vector<int64_t>{0, 0, 1}), 3);
  EXPECT_EQ(IndexUtil::MultiIndexToLinear(shape, std::vector<int64_t>{1, 0, 0}), 12);
  EXPECT_EQ(IndexUtil::MultiIndexToLinear(shape, std::vector<int64_t>{1, 2, 3}), 12 + 9 + 2);
}

TEST(IndexUtil, LinearToMultiInvertsForEveryLayout) {
  const std::vector<std::vector<int64_t>> layouts = {{2, 1, 0}, {0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}};
  for (const auto& minor_to_major : layouts) {
    const Shape shape = WithLayout(Shape(ElementType::kF32, {2, 3, 4}), minor_to_major);
    std::vector<bool> seen(24, false);
    std::vector<int64_t> index = {0, 0, 0};
    do {
      const int64_t linear = IndexUtil::MultiIndexToLinear(shape, index);
      ASSERT_GE(linear, 0);
      ASSERT_LT(linear, 24);
      EXPECT_FALSE(seen[static_cast<size_t>(linear)]) << "two indices map to " << linear;
      seen[static_cast<size_t>(linear)] = true;
      EXPECT_EQ(IndexUtil::LinearToMultiIndex(shape, linear), index);
    } while (IndexUtil::Bump(shape, index));
  }
}

TEST(IndexUtil, PaddedLinearIndices) {
  // Seed 002: [2 x 3] padded to [3, 5], column-major: 'e' (index {1,1}) sits at 4.
  const Shape shape = WithLayout(Shape(ElementType::kF32, {2, 3}), {0, 1}, {3, 5});
  EXPECT_EQ(IndexUtil::MultiIndexToLinear(shape, std::vector<int64_t>{1, 1}), 4);
  EXPECT_EQ(IndexUtil::MultiIndexToLinear(shape, std::vector<int64_t>{1, 2}), 7);
  EXPECT_EQ(IndexUtil::LinearToMultiIndex(shape, 7), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(IndexUtil::Stride(shape, 0), 1);
  EXPECT_EQ(IndexUtil::Stride(shape, 1), 3);
}

TEST(IndexUtil, Strides) {
  const Shape shape(ElementType::kF32, {5, 8, 10, 4});  // layout {3,2,1,0}
  EXPECT_EQ(IndexUtil::Stride(shape, 3), 1);
  EXPECT_EQ(IndexUtil::Stride(shape, 2), 4);
  EXPECT_EQ(IndexUtil::Stride(shape, 1), 40);
  EXPECT_EQ(IndexUtil::Stride(shape, 0), 320);
  const Shape column_major = WithLayout(shape, {0, 1, 2, 3});
  EXPECT_EQ(IndexUtil::Stride(column_major, 0), 1);
  EXPECT_EQ(IndexUtil::Stride(column_major, 1), 5);
  EXPECT_EQ(IndexUtil::Stride(column_major, 2), 40);
  EXPECT_EQ(IndexUtil::Stride(column_major, 3), 400);
}

TEST(IndexUtil, BumpWalksRowMajorAndStops) {
  const Shape shape(ElementType::kF32, {2, 2});
  std::vector<int64_t> index = {0, 0};
  std::vector<std::vector<int64_t>> visited = {index};
  while (IndexUtil::Bump(shape, index)) visited.push_back(index);
  EXPECT_EQ(visited, (std::vector<std::vector<int64_t>>{{0, 0}, {0, 1}, {1, 0}, {1, 1}}));
}

TEST(IndexUtil, InBounds) {
  const Shape shape(ElementType::kF32, {2, 3});
  EXPECT_TRUE(IndexUtil::InBounds(shape, std::vector<int64_t>{1, 2}));
  EXPECT_FALSE(IndexUtil::InBounds(shape, std::vector<int64_t>{2, 0}));
  EXPECT_FALSE(IndexUtil::InBounds(shape, std::vector<int64_t>{0, -1}));
  EXPECT_FALSE(IndexUtil::InBounds(shape, std::vector<int64_t>{0}));
  EXPECT_TRUE(IndexUtil::InBounds(Shape::Scalar(ElementType::kF32), std::vector<int64_t>{}));
}

TEST(IndexUtil, RowMajorToLayoutRoundTripsAllLayouts) {
  const Shape base(ElementType::kS32, {2, 3, 4});
  std::vector<int32_t> values(24);
  for (int i = 0; i < 24; ++i) values[static_cast<size_t>(i)] = 100 + i;
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(values.data()), 24 * sizeof(int32_t));
  for (const auto& minor_to_major : std::vector<std::vector<int64_t>>{{0, 1, 2}, {1, 0, 2}, {2, 0, 1}}) {
    const Shape shape = WithLayout(base, minor_to_major, {3, 3, 5}, PaddingValue::kZero);
    const auto physical = RowMajorToLayout(shape, bytes);
    ASSERT_EQ(physical.size(), 45 * sizeof(int32_t));
    // Each element sits where MultiIndexToLinear says.
    std::vector<int64_t> index = {0, 0, 0};
    size_t source = 0;
    do {
      int32_t value = 0;
      std::memcpy(&value,
                  physical.data() +
                      IndexUtil::MultiIndexToLinear(shape, index) * static_cast<int64_t>(sizeof(int32_t)),
                  sizeof(int32_t));
      EXPECT_EQ(value, values[source++]);
    } while (IndexUtil::Bump(shape, index));
    const auto back = LayoutToRowMajor(shape, physical);
    EXPECT_TRUE(std::equal(back.begin(), back.end(), bytes.begin(), bytes.end()));
  }
}

}  // namespace
}  // namespace kiln
