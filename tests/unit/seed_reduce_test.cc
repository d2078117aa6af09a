// Worked examples of the operation-semantics seed for reductions and
// windows: Reduce (2-D and 3-D), ReduceWindow (valid and same padding),
// SelectAndScatter, CrossReplicaSum.
#include <limits>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "tests/unit/test_util.h"

namespace kiln {
namespace {

using Dims = std::vector<int64_t>;
using kiln::testing::RunsTo;
using kiln::testing::ScalarBinaryComputation;

std::unique_ptr<Module> MakeComputation(Opcode opcode, ElementType type = ElementType::kF32) {
  auto module = ScalarBinaryComputation(opcode, type, std::string(OpcodeName(opcode)));
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

// The seed's 2-D example: {{1,2,3},{4,5,6}}.
Literal Seed2D() { return Literal::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3}); }
// The seed's 3-D example: [4x2x3], values 1..6 copied along dimension 0.
Literal Seed3D() {
  std::vector<float> values;
  for (int copy = 0; copy < 4; ++copy) {
    for (float v = 1; v <= 6; ++v) values.push_back(v);
  }
  return Literal::FromVector<float>(values, {4, 2, 3});
}

void ExpectAddReduce(const Literal& operand, const Dims& dimensions, const Literal& expected) {
  auto add = MakeComputation(Opcode::kAdd);
  ASSERT_NE(add, nullptr);
  Builder b("reduce");
  b.Reduce(b.Parameter(0, operand.shape(), "operand"), b.ConstantR0<float>(0), *add, dimensions);
  EXPECT_TRUE(RunsTo(b, expected, std::vector<Literal>{operand}));
}

TEST(SeedReduce, OneDimensional) {
  ExpectAddReduce(Literal::FromVector<float>({10, 11, 12, 13}), {0}, Literal::Scalar<float>(46));
}

TEST(SeedReduce, TwoDimensionalDim0) {
  ExpectAddReduce(Seed2D(), {0}, Literal::FromVector<float>({5, 7, 9}));
}

TEST(SeedReduce, TwoDimensionalDim1) { ExpectAddReduce(Seed2D(), {1}, Literal::FromVector<float>({6, 15})); }

TEST(SeedReduce, TwoDimensionalBothDims) { ExpectAddReduce(Seed2D(), {0, 1}, Literal::Scalar<float>(21)); }

TEST(SeedReduce, ThreeDimensionalDim0) {
  ExpectAddReduce(Seed3D(), {0}, Literal::FromVector<float>({4, 8, 12, 16, 20, 24}, {2, 3}));
}

TEST(SeedReduce, ThreeDimensionalDim2) {
  ExpectAddReduce(Seed3D(), {2}, Literal::FromVector<float>({6, 15, 6, 15, 6, 15, 6, 15}, {4, 2}));
}

TEST(SeedReduce, ThreeDimensionalDims01) {
  ExpectAddReduce(Seed3D(), {0, 1}, Literal::FromVector<float>({20, 28, 36}));
}

TEST(SeedReduce, ThreeDimensionalDimsUnordered) {
  // Dimensions are an unordered set.
  ExpectAddReduce(Seed3D(), {1, 0}, Literal::FromVector<float>({20, 28, 36}));
}

TEST(SeedReduce, ThreeDimensionalAllDims) {
  ExpectAddReduce(Seed3D(), {0, 1, 2}, Literal::Scalar<float>(84));
}

TEST(SeedReduce, InitValueIsUsed) {
  // init_value enters each reduction (here once per output element for a max).
  auto max = MakeComputation(Opcode::kMaximum);
  ASSERT_NE(max, nullptr);
  Builder b("reduce");
  b.Reduce(b.ConstantLiteral(Seed2D()), b.ConstantR0<float>(4.5f), *max, Dims{1});
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({4.5f, 6})));
}

TEST(SeedReduce, IntegerMultiply) {
  auto mul = MakeComputation(Opcode::kMultiply, ElementType::kS32);
  ASSERT_NE(mul, nullptr);
  Builder b("reduce");
  b.Reduce(b.ConstantLiteral(Literal::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3})),
           b.ConstantR0<int32_t>(1), *mul, Dims{0});
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<int32_t>({4, 10, 18})));
}

TEST(SeedReduce, RefusesBadDimensionsAndComputation) {
  auto add = MakeComputation(Opcode::kAdd);
  ASSERT_NE(add, nullptr);
  {
    Builder b("reduce");
    b.Reduce(b.ConstantLiteral(Seed2D()), b.ConstantR0<float>(0), *add, Dims{2});
    EXPECT_FALSE(b.first_error().ok()) << "dimension out of range";
  }
  {
    Builder b("reduce");
    b.Reduce(b.ConstantLiteral(Seed2D()), b.ConstantR0<int32_t>(0), *add, Dims{0});
    EXPECT_FALSE(b.first_error().ok()) << "init type differs";
  }
}

// The seed's ReduceWindow example: a [4x6] input, max over 2x3 windows with
// stride 2x3 and valid padding, init = lowest float.
TEST(SeedReduceWindow, Max2x3Stride2x3) {
  auto max = MakeComputation(Opcode::kMaximum);
  ASSERT_NE(max, nullptr);
  Builder b("reduce_window_2x3");
  const Op input = b.Parameter(0, Shape(ElementType::kF32, {4, 6}), "input");
  b.ReduceWindow(input, b.ConstantR0<float>(-std::numeric_limits<float>::infinity()), *max, Dims{2, 3},
                 Dims{2, 3}, Padding::kValid);
  const Literal operand = Literal::FromVector<float>({7, 2, 5, 3, 10, 2,  //
                                                      3, 8, 9, 3, 4,  2,  //
                                                      1, 5, 7, 5, 6,  1,  //
                                                      0, 6, 2, 7, 2,  8},
                                                     {4, 6});
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({9, 10, 7, 8}, {2, 2}), std::vector<Literal>{operand}));
}

TEST(SeedReduceWindow, SamePaddingOnSeedInputIsValid) {
  // With stride == window on a [4x6] input, SAME needs no padding.
  auto max = MakeComputation(Opcode::kMaximum);
  ASSERT_NE(max, nullptr);
  Builder b("reduce_window_2x3");
  b.ReduceWindow(b.ConstantLiteral(Literal::FromVector<float>(
                     {7, 2, 5, 3, 10, 2, 3, 8, 9, 3, 4, 2, 1, 5, 7, 5, 6, 1, 0, 6, 2, 7, 2, 8}, {4, 6})),
                 b.ConstantR0<float>(-std::numeric_limits<float>::infinity()), *max, Dims{2, 3}, Dims{2, 3},
                 Padding::kSame);
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({9, 10, 7, 8}, {2, 2})));
}

void ExpectSumWindow1D(int64_t stride, Padding padding, const Literal& expected) {
  auto add = MakeComputation(Opcode::kAdd);
  ASSERT_NE(add, nullptr);
  Builder b("reduce_window");
  b.ReduceWindow(b.Parameter(0, Shape(ElementType::kF32, {5}), "x"), b.ConstantR0<float>(0), *add, Dims{3},
                 Dims{stride}, padding);
  EXPECT_TRUE(
      RunsTo(b, expected, std::vector<Literal>{Literal::FromVector<float>({10000, 1000, 100, 10, 1})}));
}

TEST(SeedReduceWindow, SamePaddingStride1) {
  // Padding makes the output as long as the input: one zero on each side.
  ExpectSumWindow1D(1, Padding::kSame, Literal::FromVector<float>({11000, 11100, 1110, 111, 11}));
}

TEST(SeedReduceWindow, SamePaddingStride2) {
  // ceil(5 / 2) = 3 windows, padding (1, 1).
  ExpectSumWindow1D(2, Padding::kSame, Literal::FromVector<float>({11000, 1110, 11}));
}

TEST(SeedReduceWindow, ValidPaddingStride1) {
  ExpectSumWindow1D(1, Padding::kValid, Literal::FromVector<float>({11100, 1110, 111}));
}

TEST(SeedReduceWindow, ValidPaddingStride2) {
  ExpectSumWindow1D(2, Padding::kValid, Literal::FromVector<float>({11100, 111}));
}

TEST(SeedReduceWindow, SamePadding2DStride1) {
  // 3x3 window, stride 1, SAME on [2x3] of ones: each output counts the
  // in-bounds neighbours.
  auto add = MakeComputation(Opcode::kAdd);
  ASSERT_NE(add, nullptr);
  Builder b("reduce_window");
  b.ReduceWindow(b.ConstantLiteral(Literal::FromVector<float>({1, 1, 1, 1, 1, 1}, {2, 3})),
                 b.ConstantR0<float>(0), *add, Dims{3, 3}, Dims{1, 1}, Padding::kSame);
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({4, 6, 4, 4, 6, 4}, {2, 3})));
}

TEST(SeedReduceWindow, MakePaddingSame) {
  const Dims input = {5}, window = {3};
  EXPECT_EQ(MakePadding(input, window, Dims{1}, Padding::kSame),
            (std::vector<std::pair<int64_t, int64_t>>{{1, 1}}));
  EXPECT_EQ(MakePadding(input, window, Dims{2}, Padding::kSame),
            (std::vector<std::pair<int64_t, int64_t>>{{1, 1}}));
  EXPECT_EQ(MakePadding(input, window, Dims{1}, Padding::kValid),
            (std::vector<std::pair<int64_t, int64_t>>{{0, 0}}));
  // Odd total padding puts the extra element on the high side.
  EXPECT_EQ(MakePadding(Dims{4}, Dims{2}, Dims{1}, Padding::kSame),
            (std::vector<std::pair<int64_t, int64_t>>{{0, 1}}));
}

struct SelectScatterComputations {
  std::unique_ptr<Module> select;   // a >= b: first (lexicographically smaller) wins ties
  std::unique_ptr<Module> scatter;  // add
};

SelectScatterComputations MaxSelectAddScatter() {
  SelectScatterComputations c;
  Builder select("ge");
  select.Ge(select.Parameter(0, Shape::Scalar(ElementType::kF32), "a"),
            select.Parameter(1, Shape::Scalar(ElementType::kF32), "b"));
  auto built = select.Build();
  EXPECT_TRUE(built.ok()) << built.status().ToString();
  if (built.ok()) c.select = std::move(built).value();
  c.scatter = MakeComputation(Opcode::kAdd);
  return c;
}

TEST(SeedSelectAndScatter, NonOverlappingWindows) {
  auto c = MaxSelectAddScatter();
  ASSERT_NE(c.select, nullptr);
  ASSERT_NE(c.scatter, nullptr);
  Builder b("select_and_scatter");
  const Op operand = b.Parameter(0, Shape(ElementType::kF32, {4, 6}), "operand");
  const Op source = b.Parameter(1, Shape(ElementType::kF32, {2, 2}), "source");
  b.SelectAndScatter(operand, *c.select, Dims{2, 3}, Dims{2, 3}, Padding::kValid, source,
                     b.ConstantR0<float>(0), *c.scatter);
  const std::vector<Literal> args = {Literal::FromVector<float>({7, 2, 5, 3, 10, 2,  //
                                                                 3, 8, 9, 3, 4,  2,  //
                                                                 1, 5, 7, 5, 6,  1,  //
                                                                 0, 6, 2, 7, 2,  8},
                                                                {4, 6}),
                                     Literal::FromVector<float>({2, 6, 3, 1}, {2, 2})};
  EXPECT_TRUE(RunsTo(b,
                     Literal::FromVector<float>({0, 0, 0, 0, 6, 0,  //
                                                 0, 0, 2, 0, 0, 0,  //
                                                 0, 0, 3, 0, 0, 0,  //
                                                 0, 0, 0, 0, 0, 1},
                                                {4, 6}),
                     args));
}

TEST(SeedSelectAndScatter, OverlappingWindowsAddAtTheSameIndex) {
  // 3x3 windows with stride 2 overlap on column 2; 9 is the max of both top
  // windows, so it receives 2 + 6 = 8.
  auto c = MaxSelectAddScatter();
  ASSERT_NE(c.select, nullptr);
  ASSERT_NE(c.scatter, nullptr);
  Builder b("select_and_scatter");
  const Op operand = b.Parameter(0, Shape(ElementType::kF32, {5, 5}), "operand");
  const Op source = b.Parameter(1, Shape(ElementType::kF32, {2, 2}), "source");
  b.SelectAndScatter(operand, *c.select, Dims{3, 3}, Dims{2, 2}, Padding::kValid, source,
                     b.ConstantR0<float>(0), *c.scatter);
  const std::vector<Literal> args = {Literal::FromVector<float>({7, 2, 5, 3,  8,  //
                                                                 3, 8, 9, 3,  4,  //
                                                                 1, 5, 7, 5,  6,  //
                                                                 0, 6, 2, 10, 2,  //
                                                                 8, 1, 4, 3,  5},
                                                                {5, 5}),
                                     Literal::FromVector<float>({2, 6, 3, 1}, {2, 2})};
  EXPECT_TRUE(RunsTo(b,
                     Literal::FromVector<float>({0, 0, 0, 0, 0,  //
                                                 0, 0, 8, 0, 0,  //
                                                 0, 0, 0, 0, 0,  //
                                                 0, 0, 0, 1, 0,  //
                                                 3, 0, 0, 0, 0},
                                                {5, 5}),
                     args));
}

TEST(SeedSelectAndScatter, InitValueFillsUnselected) {
  auto c = MaxSelectAddScatter();
  ASSERT_NE(c.select, nullptr);
  ASSERT_NE(c.scatter, nullptr);
  Builder b("select_and_scatter");
  b.SelectAndScatter(b.ConstantR1<float>({1, 3, 2, 0}), *c.select, Dims{2}, Dims{2}, Padding::kValid,
                     b.ConstantR1<float>({10, 20}), b.ConstantR0<float>(100), *c.scatter);
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({100, 110, 120, 100})));
}

TEST(SeedSelectAndScatter, RefusesSourceShapeMismatch) {
  auto c = MaxSelectAddScatter();
  ASSERT_NE(c.select, nullptr);
  ASSERT_NE(c.scatter, nullptr);
  Builder b("select_and_scatter");
  b.SelectAndScatter(b.ConstantR1<float>({1, 3, 2, 0}), *c.select, Dims{2}, Dims{2}, Padding::kValid,
                     b.ConstantR1<float>({10, 20, 30}), b.ConstantR0<float>(0), *c.scatter);
  EXPECT_FALSE(b.first_error().ok());
}

TEST(SeedCrossReplicaSum, OneReplicaIsIdentity) {
  Builder b("cross_replica_sum");
  b.CrossReplicaSum(b.Parameter(0, Shape(ElementType::kF32, {2}), "x"));
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({1.0f, 2.5f}),
                     std::vector<Literal>{Literal::FromVector<float>({1.0f, 2.5f})}));
}

}  // namespace
}  // namespace kiln
