// Data-movement ops of the interpreter: clamped dynamic slices, pad with
// negative and interior padding, strided slices, gather and scatter.
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

using testing::BuildAndRun;

Literal Iota2D(int64_t rows, int64_t cols) {
  std::vector<int32_t> values(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int32_t>(i);
  return Literal::FromVector<int32_t>(values, {rows, cols});
}

TEST(InterpreterShapeOpsTest, DynamicSliceClampsStartIndices) {
  Builder builder("dynamic_slice");
  Op operand = builder.ConstantLiteral(Iota2D(4, 4));
  // Start (3, -2) clamps to (2, 0) so that a 2x3 slice fits.
  Op starts = builder.ConstantR1<int32_t>({3, -2});
  const int64_t sizes[] = {2, 3};
  builder.DynamicSlice(operand, starts, sizes);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result, Literal::FromVector<int32_t>({8, 9, 10, 12, 13, 14}, {2, 3}));
}

TEST(InterpreterShapeOpsTest, DynamicSliceWithScalarStarts) {
  Builder builder("dynamic_slice_scalars");
  Op operand = builder.ConstantLiteral(Iota2D(3, 5));
  const Op starts[] = {builder.ConstantR0<int64_t>(1), builder.ConstantR0<int64_t>(100)};
  const int64_t sizes[] = {2, 2};
  builder.DynamicSlice(operand, starts, sizes);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result, Literal::FromVector<int32_t>({8, 9, 13, 14}, {2, 2}));
}

TEST(InterpreterShapeOpsTest, DynamicUpdateSliceClampsStartIndices) {
  Builder builder("dynamic_update_slice");
  Op operand = builder.ConstantLiteral(Literal::FromVector<int32_t>(std::vector<int32_t>(9, 0), {3, 3}));
  Op update = builder.ConstantLiteral(Literal::FromVector<int32_t>({1, 2, 3, 4}, {2, 2}));
  Op starts = builder.ConstantR1<int32_t>({5, -1});
  builder.DynamicUpdateSlice(operand, update, starts);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result, Literal::FromVector<int32_t>({0, 0, 0, 1, 2, 0, 3, 4, 0}, {3, 3}));
}

TEST(InterpreterShapeOpsTest, PadWithNegativeLowAndInteriorPadding) {
  Builder builder("pad");
  Op operand = builder.ConstantR1<float>({1, 2, 3});
  Op value = builder.ConstantR0<float>(-1);
  const PaddingDimension padding[] = {{-1, 2, 1}};  // [1,-1,2,-1,3] then drop 1 low, add 2 high
  builder.Pad(operand, value, padding);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result, Literal::FromVector<float>({-1, 2, -1, 3, -1, -1}));
}

TEST(InterpreterShapeOpsTest, StridedSliceReverseTransposeConcat) {
  Builder builder("moves");
  Op matrix = builder.ConstantLiteral(Iota2D(3, 4));
  const int64_t starts[] = {0, 1}, limits[] = {3, 4}, strides[] = {2, 2};
  Op sliced = builder.Slice(matrix, starts, limits, strides);
  const int64_t reverse_dims[] = {0, 1};
  Op reversed = builder.Rev(matrix, reverse_dims);
  const int64_t permutation[] = {1, 0};
  Op transposed = builder.Transpose(matrix, permutation);
  const Op pieces[] = {sliced, sliced};
  Op joined = builder.ConcatInDim(pieces, 1);
  const Op outputs[] = {sliced, reversed, transposed, joined};
  builder.Tuple(outputs);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result.tuple_elements()[0], Literal::FromVector<int32_t>({1, 3, 9, 11}, {2, 2}));
  EXPECT_EQ(result.tuple_elements()[1],
            Literal::FromVector<int32_t>({11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, {3, 4}));
  EXPECT_EQ(result.tuple_elements()[2],
            Literal::FromVector<int32_t>({0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}, {4, 3}));
  EXPECT_EQ(result.tuple_elements()[3], Literal::FromVector<int32_t>({1, 3, 1, 3, 9, 11, 9, 11}, {2, 4}));
}

TEST(InterpreterShapeOpsTest, BroadcastInDimAndIota) {
  Builder builder("broadcast");
  Op row = builder.ConstantR1<int32_t>({1, 2});
  const int64_t out_dims[] = {2, 3};
  const int64_t mapping[] = {0};
  Op column_broadcast = builder.BroadcastInDim(row, out_dims, mapping);
  Op iota = builder.Iota(Shape(ElementType::kF32, {2, 3}), 1);
  const Op outputs[] = {column_broadcast, iota};
  builder.Tuple(outputs);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result.tuple_elements()[0], Literal::FromVector<int32_t>({1, 1, 1, 2, 2, 2}, {2, 3}));
  EXPECT_EQ(result.tuple_elements()[1], Literal::FromVector<float>({0, 1, 2, 0, 1, 2}, {2, 3}));
}

TEST(InterpreterShapeOpsTest, GatherRowsClampsOutOfRangeStarts) {
  Builder builder("gather");
  Op operand = builder.ConstantLiteral(Iota2D(3, 3));
  Op indices = builder.ConstantR1<int32_t>({2, 0, 7, -3});
  GatherDimensionNumbers numbers;
  numbers.offset_dims = {1};
  numbers.collapsed_slice_dims = {0};
  numbers.start_index_map = {0};
  numbers.index_vector_dim = 1;
  const int64_t slice_sizes[] = {1, 3};
  builder.Gather(operand, indices, numbers, slice_sizes);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result, Literal::FromVector<int32_t>({6, 7, 8, 0, 1, 2, 6, 7, 8, 0, 1, 2}, {4, 3}));
}

TEST(InterpreterShapeOpsTest, GatherTwoDimensionalWindows) {
  Builder builder("gather2d");
  Op operand = builder.ConstantLiteral(Iota2D(4, 4));
  Op indices = builder.ConstantLiteral(Literal::FromVector<int32_t>({0, 0, 3, 3}, {2, 2}));
  GatherDimensionNumbers numbers;
  numbers.offset_dims = {1, 2};
  numbers.start_index_map = {0, 1};
  numbers.index_vector_dim = 1;
  const int64_t slice_sizes[] = {2, 2};
  builder.Gather(operand, indices, numbers, slice_sizes);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  // (3,3) clamps to (2,2).
  EXPECT_EQ(result, Literal::FromVector<int32_t>({0, 1, 4, 5, 10, 11, 14, 15}, {2, 2, 2}));
}

TEST(InterpreterShapeOpsTest, ScatterAddAccumulatesAndSkipsOutOfBounds) {
  KILN_ASSERT_OK_AND_ASSIGN(auto add,
                            testing::ScalarBinaryComputation(Opcode::kAdd, ElementType::kF32, "add"));
  Builder builder("scatter");
  Op operand = builder.ConstantLiteral(Literal::FromVector<float>(std::vector<float>(6, 0.0f), {3, 2}));
  Op indices = builder.ConstantR1<int32_t>({1, 1, 5, 0});
  Op updates = builder.ConstantLiteral(Literal::FromVector<float>({1, 2, 10, 20, 100, 200, 7, 8}, {4, 2}));
  ScatterDimensionNumbers numbers;
  numbers.update_window_dims = {1};
  numbers.inserted_window_dims = {0};
  numbers.scatter_dims_to_operand_dims = {0};
  numbers.index_vector_dim = 1;
  builder.Scatter(operand, indices, updates, *add, numbers);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result, Literal::FromVector<float>({7, 8, 11, 22, 0, 0}, {3, 2}));
}

TEST(InterpreterShapeOpsTest, ScatterWithGeneralCombinerOverwrites) {
  // Combiner returns its second parameter: plain assignment.
  Builder combiner_builder("assign");
  combiner_builder.Parameter(0, Shape::Scalar(ElementType::kS32), "old");
  combiner_builder.Parameter(1, Shape::Scalar(ElementType::kS32), "new");
  KILN_ASSERT_OK_AND_ASSIGN(auto assign, combiner_builder.Build());
  Builder builder("scatter_assign");
  Op operand = builder.ConstantR1<int32_t>({0, 0, 0, 0});
  Op indices = builder.ConstantR1<int32_t>({3, 0});
  Op updates = builder.ConstantR1<int32_t>({5, 6});
  ScatterDimensionNumbers numbers;
  numbers.inserted_window_dims = {0};
  numbers.scatter_dims_to_operand_dims = {0};
  numbers.index_vector_dim = 1;
  builder.Scatter(operand, indices, updates, *assign, numbers);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result, Literal::FromVector<int32_t>({6, 0, 0, 5}));
}

TEST(InterpreterShapeOpsTest, ReshapeAndGetDimensionSize) {
  Builder builder("reshape");
  Op matrix = builder.ConstantLiteral(Iota2D(2, 3));
  const int64_t sizes[] = {3, 2};
  const Op outputs[] = {builder.Reshape(matrix, sizes), builder.GetDimensionSize(matrix, 1)};
  builder.Tuple(outputs);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result.tuple_elements()[0], Literal::FromVector<int32_t>({0, 1, 2, 3, 4, 5}, {3, 2}));
  EXPECT_EQ(result.tuple_elements()[1], Literal::Scalar<int32_t>(3));
}

}  // namespace
}  // namespace kiln
