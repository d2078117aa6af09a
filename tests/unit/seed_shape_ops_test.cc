// Worked examples of the operation-semantics seed for the ops that move data
// around: Broadcast, Collapse, Concatenate, Reshape, Rev, Transpose, Pad,
// Slice, DynamicSlice, DynamicUpdateSlice, Sort, Tuple, GetTupleElement.
#include <vector>

#include <gtest/gtest.h>

#include "tests/unit/test_util.h"

namespace kiln {
namespace {

using Dims = std::vector<int64_t>;
using kiln::testing::RunsTo;

// The seed's 24-element array v = f32[4x2x3].
Literal SeedV() {
  return Literal::FromVector<float>(
      {10, 11, 12, 15, 16, 17, 20, 21, 22, 25, 26, 27, 30, 31, 32, 35, 36, 37, 40, 41, 42, 45, 46, 47},
      {4, 2, 3});
}

// b = {{0,1,2},{3,4,5},{6,7,8},{9,10,11}} of the Slice examples.
Literal SeedB() { return Literal::FromVector<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {4, 3}); }

TEST(SeedBroadcast, ScalarToMatrix) {
  Builder b("broadcast");
  b.Broadcast(b.ConstantR0<float>(2.0f), Dims{2, 3});
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({2, 2, 2, 2, 2, 2}, {2, 3})));
}

TEST(SeedBroadcast, NewDimensionsAreMajor) {
  // output[i0, j0] = operand[j0]: the new dimension is on the left.
  Builder b("broadcast");
  b.Broadcast(b.Parameter(0, Shape(ElementType::kS32, {2}), "x"), Dims{3});
  const Literal x = Literal::FromVector<int32_t>({1, 2});
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<int32_t>({1, 2, 1, 2, 1, 2}, {3, 2}), std::vector<Literal>{x}));
}

TEST(SeedCollapse, V012) {
  Builder b("collapse");
  b.Collapse(b.ConstantLiteral(SeedV()), Dims{0, 1, 2});
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({10, 11, 12, 15, 16, 17, 20, 21, 22, 25, 26, 27,
                                                    30, 31, 32, 35, 36, 37, 40, 41, 42, 45, 46, 47})));
}

// The seed's text defines Collapse: the listed dimensions are replaced by one
// of their product's size, at their position. Its two 2-D pictures are
// labelled the other way round ({0,1} with the [4x6] result, {1,2} with the
// [8x3] one), which contradicts that definition (and XLA): dimensions 0 and 1
// of v are 4 and 2, so Collapse(v, {0,1}) is [8x3]. The tests follow the
// definition, with the seed's own pictures as the expected values.
TEST(SeedCollapse, V01) {
  Builder b("collapse");
  b.Collapse(b.Parameter(0, SeedV().shape(), "v"), Dims{0, 1});
  EXPECT_TRUE(RunsTo(b,
                     Literal::FromVector<float>({10, 11, 12, 15, 16, 17, 20, 21, 22, 25, 26, 27,
                                                 30, 31, 32, 35, 36, 37, 40, 41, 42, 45, 46, 47},
                                                {8, 3}),
                     std::vector<Literal>{SeedV()}));
}

TEST(SeedCollapse, V12) {
  Builder b("collapse");
  b.Collapse(b.Parameter(0, SeedV().shape(), "v"), Dims{1, 2});
  EXPECT_TRUE(RunsTo(b,
                     Literal::FromVector<float>({10, 11, 12, 15, 16, 17, 20, 21, 22, 25, 26, 27,
                                                 30, 31, 32, 35, 36, 37, 40, 41, 42, 45, 46, 47},
                                                {4, 6}),
                     std::vector<Literal>{SeedV()}));
}

TEST(SeedCollapse, RefusesUnorderedOrNonConsecutiveDimensions) {
  for (const Dims& bad : {Dims{1, 0}, Dims{0, 2}, Dims{0, 3}}) {
    Builder b("collapse");
    b.Collapse(b.ConstantLiteral(SeedV()), bad);
    EXPECT_FALSE(b.first_error().ok()) << bad[0] << "," << bad[1];
    EXPECT_FALSE(b.Build().ok());
  }
}

TEST(SeedConcatenate, OneDimensional) {
  Builder b("concat");
  const std::vector<Op> parts = {b.ConstantR1<int32_t>({2, 3}), b.ConstantR1<int32_t>({4, 5}),
                                 b.ConstantR1<int32_t>({6, 7})};
  b.ConcatInDim(parts, 0);
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<int32_t>({2, 3, 4, 5, 6, 7})));
}

TEST(SeedConcatenate, TwoDimensional) {
  Builder b("concat");
  const Op a = b.Parameter(0, Shape(ElementType::kS32, {3, 2}), "a");
  const Op rows = b.Parameter(1, Shape(ElementType::kS32, {1, 2}), "b");
  b.ConcatInDim(std::vector<Op>{a, rows}, 0);
  const std::vector<Literal> args = {Literal::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, {3, 2}),
                                     Literal::FromVector<int32_t>({7, 8}, {1, 2})};
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<int32_t>({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2}), args));
}

TEST(SeedConcatenate, RefusesScalarsAndRaggedShapes) {
  {
    Builder b("concat");
    b.ConcatInDim(std::vector<Op>{b.ConstantR0<float>(1), b.ConstantR0<float>(2)}, 0);
    EXPECT_FALSE(b.first_error().ok()) << "rank-0 values cannot be concatenated";
  }
  {
    Builder b("concat");
    b.ConcatInDim(std::vector<Op>{b.ConstantLiteral(Literal(Shape(ElementType::kF32, {2, 2}))),
                                  b.ConstantLiteral(Literal(Shape(ElementType::kF32, {2, 3})))},
                  0);
    EXPECT_FALSE(b.first_error().ok()) << "dimension 1 differs";
  }
}

TEST(SeedReshape, V012_24) {
  Builder b("reshape");
  b.Reshape(b.ConstantLiteral(SeedV()), Dims{0, 1, 2}, Dims{24});
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({10, 11, 12, 15, 16, 17, 20, 21, 22, 25, 26, 27,
                                                    30, 31, 32, 35, 36, 37, 40, 41, 42, 45, 46, 47})));
}

TEST(SeedReshape, V012_83) {
  Builder b("reshape");
  b.Reshape(b.Parameter(0, SeedV().shape(), "v"), Dims{0, 1, 2}, Dims{8, 3});
  EXPECT_TRUE(RunsTo(b,
                     Literal::FromVector<float>({10, 11, 12, 15, 16, 17, 20, 21, 22, 25, 26, 27,
                                                 30, 31, 32, 35, 36, 37, 40, 41, 42, 45, 46, 47},
                                                {8, 3}),
                     std::vector<Literal>{SeedV()}));
}

TEST(SeedReshape, V021_24) {
  Builder b("reshape");
  b.Reshape(b.Parameter(0, SeedV().shape(), "v"), Dims{1, 2, 0}, Dims{24});
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({10, 20, 30, 40, 11, 21, 31, 41, 12, 22, 32, 42,
                                                    15, 25, 35, 45, 16, 26, 36, 46, 17, 27, 37, 47}),
                     std::vector<Literal>{SeedV()}));
}

TEST(SeedReshape, V021_83) {
  Builder b("reshape");
  b.Reshape(b.ConstantLiteral(SeedV()), Dims{1, 2, 0}, Dims{8, 3});
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({10, 20, 30, 40, 11, 21, 31, 41, 12, 22, 32, 42,
                                                    15, 25, 35, 45, 16, 26, 36, 46, 17, 27, 37, 47},
                                                   {8, 3})));
}

TEST(SeedReshape, V021_262) {
  Builder b("reshape");
  b.Reshape(b.Parameter(0, SeedV().shape(), "v"), Dims{1, 2, 0}, Dims{2, 6, 2});
  EXPECT_TRUE(RunsTo(b,
                     Literal::FromVector<float>({10, 20, 30, 40, 11, 21, 31, 41, 12, 22, 32, 42,
                                                 15, 25, 35, 45, 16, 26, 36, 46, 17, 27, 37, 47},
                                                {2, 6, 2}),
                     std::vector<Literal>{SeedV()}));
}

TEST(SeedReshape, OneByOneToScalar) {
  Builder b("reshape");
  b.Reshape(b.ConstantLiteral(Literal::FromVector<float>({5}, {1, 1})), Dims{0, 1}, Dims{});
  EXPECT_TRUE(RunsTo(b, Literal::Scalar<float>(5)));
}

TEST(SeedReshape, ScalarToOneByOne) {
  Builder b("reshape");
  b.Reshape(b.Parameter(0, Shape::Scalar(ElementType::kF32), "x"), Dims{}, Dims{1, 1});
  EXPECT_TRUE(
      RunsTo(b, Literal::FromVector<float>({5}, {1, 1}), std::vector<Literal>{Literal::Scalar<float>(5)}));
}

TEST(SeedReshape, DefaultDimensionOrder) {
  Builder b("reshape");
  b.Reshape(b.ConstantLiteral(SeedV()), Dims{6, 4});
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({10, 11, 12, 15, 16, 17, 20, 21, 22, 25, 26, 27,
                                                    30, 31, 32, 35, 36, 37, 40, 41, 42, 45, 46, 47},
                                                   {6, 4})));
}

TEST(SeedReshape, RefusesElementCountMismatchAndNonPermutation) {
  {
    Builder b("reshape");
    b.Reshape(b.ConstantLiteral(SeedV()), Dims{0, 1, 2}, Dims{5, 5});
    EXPECT_FALSE(b.first_error().ok());
  }
  {
    Builder b("reshape");
    b.Reshape(b.ConstantLiteral(SeedV()), Dims{0, 0, 2}, Dims{24});
    EXPECT_FALSE(b.first_error().ok());
  }
}

TEST(SeedRev, ReversesEachListedDimension) {
  const Literal m = Literal::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  struct Case {
    Dims dims;
    std::vector<int32_t> expected;
  };
  const std::vector<Case> cases = {{{0}, {4, 5, 6, 1, 2, 3}},
                                   {{1}, {3, 2, 1, 6, 5, 4}},
                                   {{0, 1}, {6, 5, 4, 3, 2, 1}},
                                   {{}, {1, 2, 3, 4, 5, 6}}};
  for (const Case& c : cases) {
    Builder b("rev");
    b.Rev(b.Parameter(0, m.shape(), "m"), c.dims);
    EXPECT_TRUE(RunsTo(b, Literal::FromVector<int32_t>(c.expected, {2, 3}), std::vector<Literal>{m}))
        << "dims of size " << c.dims.size();
  }
}

TEST(SeedTranspose, Matrix) {
  Builder b("transpose");
  b.Transpose(b.ConstantLiteral(Literal::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3})), Dims{1, 0});
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<int32_t>({1, 4, 2, 5, 3, 6}, {3, 2})));
}

TEST(SeedTranspose, PermutesDimensionsOfV) {
  // input_dimensions[permutation[i]] = output_dimensions[i]: {1,2,0} of
  // [4,2,3] is [2,3,4], and out[i,j,k] = v[k,i,j].
  Builder b("transpose");
  b.Transpose(b.Parameter(0, SeedV().shape(), "v"), Dims{1, 2, 0});
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, kiln::testing::BuildAndRun(b, std::vector<Literal>{SeedV()}));
  ASSERT_EQ(result.shape(), Shape(ElementType::kF32, {2, 3, 4}));
  const Literal v = SeedV();
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t k = 0; k < 4; ++k) {
        EXPECT_EQ(result.Get<float>(Dims{i, j, k}), v.Get<float>(Dims{k, i, j})) << i << j << k;
      }
    }
  }
}

TEST(SeedTranspose, EqualsReshapeWithPermutedDimensions) {
  // Transpose(v, p) == Reshape(v, p, Permute(p, v.dims)) as the seed states.
  Builder b("transpose");
  const Op v = b.Parameter(0, SeedV().shape(), "v");
  b.Sub(b.Transpose(v, Dims{1, 2, 0}), b.Reshape(v, Dims{1, 2, 0}, Dims{2, 3, 4}));
  EXPECT_TRUE(RunsTo(b, Literal(Shape(ElementType::kF32, {2, 3, 4})), std::vector<Literal>{SeedV()}));
}

// Pad of m = {{1,2,3},{4,5,6}} with -1 so padding is visible.
void ExpectPad(const std::vector<PaddingDimension>& config, const Literal& expected) {
  Builder b("pad");
  const Op m = b.Parameter(0, Shape(ElementType::kF32, {2, 3}), "m");
  b.Pad(m, b.ConstantR0<float>(-1.0f), config);
  EXPECT_TRUE(
      RunsTo(b, expected, std::vector<Literal>{Literal::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3})}));
}

TEST(SeedPad, EdgePadding) {
  ExpectPad({{1, 0, 0}, {2, 1, 0}}, Literal::FromVector<float>({-1, -1, -1, -1, -1, -1,  //
                                                                -1, -1, 1, 2, 3, -1,     //
                                                                -1, -1, 4, 5, 6, -1},
                                                               {3, 6}));
}

TEST(SeedPad, InteriorPadding) {
  ExpectPad({{0, 0, 1}, {0, 0, 2}}, Literal::FromVector<float>({1,  -1, -1, 2,  -1, -1, 3,   //
                                                                -1, -1, -1, -1, -1, -1, -1,  //
                                                                4,  -1, -1, 5,  -1, -1, 6},
                                                               {3, 7}));
}

TEST(SeedPad, EdgeAndInteriorPadding) {
  ExpectPad({{1, 1, 1}, {1, 1, 1}}, Literal::FromVector<float>({-1, -1, -1, -1, -1, -1, -1,  //
                                                                -1, 1,  -1, 2,  -1, 3,  -1,  //
                                                                -1, -1, -1, -1, -1, -1, -1,  //
                                                                -1, 4,  -1, 5,  -1, 6,  -1,  //
                                                                -1, -1, -1, -1, -1, -1, -1},
                                                               {5, 7}));
}

TEST(SeedPad, NegativeEdgePaddingRemovesFromTheInteriorPaddedOperand) {
  // Interior padding happens first: row {1,-1,2,-1,3}; low -1 drops the 1.
  ExpectPad({{0, 0, 0}, {-1, 2, 1}}, Literal::FromVector<float>({-1, 2, -1, 3, -1, -1,  //
                                                                 -1, 5, -1, 6, -1, -1},
                                                                {2, 6}));
}

TEST(SeedPad, NegativeEdgePaddingOnly) {
  ExpectPad({{-1, 0, 0}, {-1, -1, 0}}, Literal::FromVector<float>({5}, {1, 1}));
}

TEST(SeedPad, NoPaddingIsIdentity) {
  ExpectPad({{0, 0, 0}, {0, 0, 0}}, Literal::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3}));
}

TEST(SeedSlice, OneDimensional) {
  Builder b("slice");
  b.Slice(b.ConstantR1<float>({0, 1, 2, 3, 4}), Dims{2}, Dims{4}, Dims{1});
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({2, 3})));
}

TEST(SeedSlice, TwoDimensional) {
  Builder b("slice");
  b.Slice(b.Parameter(0, SeedB().shape(), "b"), Dims{2, 1}, Dims{4, 3}, Dims{1, 1});
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({7, 8, 10, 11}, {2, 2}), std::vector<Literal>{SeedB()}));
}

TEST(SeedSlice, RefusesBadBounds) {
  for (const auto& [start, limit] : std::vector<std::pair<Dims, Dims>>{{{3}, {2}}, {{-1}, {2}}, {{0}, {6}}}) {
    Builder b("slice");
    b.Slice(b.ConstantR1<float>({0, 1, 2, 3, 4}), start, limit, Dims{1});
    EXPECT_FALSE(b.first_error().ok()) << start[0] << ".." << limit[0];
  }
}

TEST(SeedDynamicSlice, OneDimensional) {
  Builder b("dynamic_slice");
  const Op a = b.Parameter(0, Shape(ElementType::kF32, {5}), "a");
  const Op s = b.Parameter(1, Shape(ElementType::kS32, {1}), "s");
  b.DynamicSlice(a, s, Dims{2});
  const std::vector<Literal> args = {Literal::FromVector<float>({0, 1, 2, 3, 4}),
                                     Literal::FromVector<int32_t>({2})};
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({2, 3}), args));
}

TEST(SeedDynamicSlice, TwoDimensional) {
  Builder b("dynamic_slice");
  const Op m = b.Parameter(0, SeedB().shape(), "b");
  const Op s = b.Parameter(1, Shape(ElementType::kS32, {2}), "s");
  b.DynamicSlice(m, s, Dims{2, 2});
  const std::vector<Literal> args = {SeedB(), Literal::FromVector<int32_t>({2, 1})};
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({7, 8, 10, 11}, {2, 2}), args));
}

TEST(SeedDynamicSlice, ScalarStartIndices) {
  Builder b("dynamic_slice");
  const std::vector<Op> starts = {b.ConstantR0<int32_t>(2), b.ConstantR0<int32_t>(1)};
  b.DynamicSlice(b.ConstantLiteral(SeedB()), starts, Dims{2, 2});
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({7, 8, 10, 11}, {2, 2})));
}

TEST(SeedDynamicUpdateSlice, OneDimensional) {
  Builder b("dynamic_update_slice");
  const Op a = b.Parameter(0, Shape(ElementType::kF32, {5}), "a");
  const Op u = b.Parameter(1, Shape(ElementType::kF32, {2}), "u");
  const Op s = b.Parameter(2, Shape(ElementType::kS32, {1}), "s");
  b.DynamicUpdateSlice(a, u, s);
  const std::vector<Literal> args = {Literal::FromVector<float>({0, 1, 2, 3, 4}),
                                     Literal::FromVector<float>({5, 6}), Literal::FromVector<int32_t>({2})};
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({0, 1, 5, 6, 4}), args));
}

TEST(SeedDynamicUpdateSlice, TwoDimensional) {
  Builder b("dynamic_update_slice");
  const Op m = b.Parameter(0, SeedB().shape(), "b");
  const Op u = b.Parameter(1, Shape(ElementType::kF32, {3, 2}), "u");
  const Op s = b.Parameter(2, Shape(ElementType::kS32, {2}), "s");
  b.DynamicUpdateSlice(m, u, s);
  const std::vector<Literal> args = {SeedB(), Literal::FromVector<float>({12, 13, 14, 15, 16, 17}, {3, 2}),
                                     Literal::FromVector<int32_t>({1, 1})};
  EXPECT_TRUE(
      RunsTo(b, Literal::FromVector<float>({0, 1, 2, 3, 12, 13, 6, 14, 15, 9, 16, 17}, {4, 3}), args));
}

TEST(SeedDynamicUpdateSlice, ScalarStartIndices) {
  Builder b("dynamic_update_slice");
  const std::vector<Op> starts = {b.ConstantR0<int32_t>(1), b.ConstantR0<int32_t>(1)};
  b.DynamicUpdateSlice(b.ConstantLiteral(SeedB()),
                       b.ConstantLiteral(Literal::FromVector<float>({12, 13, 14, 15, 16, 17}, {3, 2})),
                       starts);
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({0, 1, 2, 3, 12, 13, 6, 14, 15, 9, 16, 17}, {4, 3})));
}

TEST(SeedSort, OneDimensional) {
  Builder b("sort");
  b.Sort(b.Parameter(0, Shape(ElementType::kF32, {6}), "x"));
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({-2.5f, 0, 1, 3, 3, 7}),
                     std::vector<Literal>{Literal::FromVector<float>({3, 1, 7, -2.5f, 0, 3})}));
}

TEST(SeedSort, SortsAlongTheLastDimension) {
  Builder b("sort");
  b.Sort(b.ConstantLiteral(Literal::FromVector<int32_t>({3, 1, 2, 9, -4, 0}, {2, 3})));
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<int32_t>({1, 2, 3, -4, 0, 9}, {2, 3})));
}

TEST(SeedTuple, TupleOfVectorAndScalar) {
  Builder b("tuple");
  const Op v = b.ConstantR1<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  const Op s = b.ConstantR0<int32_t>(5);
  const Op t = b.Tuple(std::vector<Op>{v, s});
  KILN_ASSERT_OK_AND_ASSIGN(Shape shape, b.GetShape(t));
  EXPECT_EQ(shape.ToString(), "(f32[10], s32[])");
  EXPECT_TRUE(RunsTo(b, Literal::Tuple({Literal::FromVector<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}),
                                        Literal::Scalar<int32_t>(5)})));
}

TEST(SeedGetTupleElement, ElementOneIsTheScalar) {
  Builder b("get_tuple_element");
  const Op v = b.Parameter(0, Shape(ElementType::kF32, {10}), "v");
  const Op s = b.ConstantR0<int32_t>(5);
  const Op element_1 = b.GetTupleElement(b.Tuple(std::vector<Op>{v, s}), 1);
  KILN_ASSERT_OK_AND_ASSIGN(Shape shape, b.GetShape(element_1));
  EXPECT_EQ(shape, Shape::Scalar(ElementType::kS32));  // inferred shape matches s32
  EXPECT_TRUE(RunsTo(b, Literal::Scalar<int32_t>(5),
                     std::vector<Literal>{Literal::FromVector<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9})}));
}

TEST(SeedGetTupleElement, RefusesOutOfRangeIndex) {
  Builder b("get_tuple_element");
  b.GetTupleElement(b.Tuple(std::vector<Op>{b.ConstantR0<float>(1)}), 1);
  EXPECT_FALSE(b.first_error().ok());
}

}  // namespace
}  // namespace kiln
