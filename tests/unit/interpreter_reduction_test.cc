// Reductions, windows, map and sort on the interpreter, including variadic
// forms and computations that take the general (non fast-path) route.
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

using testing::BuildAndRun;
using testing::ScalarBinaryComputation;

// (value, index) pairs reduced to the larger value, first index on ties.
std::unique_ptr<Module> ArgMaxComputation() {
  Builder builder("argmax");
  Op value_a = builder.Parameter(0, Shape::Scalar(ElementType::kF32), "value_a");
  Op index_a = builder.Parameter(1, Shape::Scalar(ElementType::kS32), "index_a");
  Op value_b = builder.Parameter(2, Shape::Scalar(ElementType::kF32), "value_b");
  Op index_b = builder.Parameter(3, Shape::Scalar(ElementType::kS32), "index_b");
  Op a_wins = builder.Or(builder.Gt(value_a, value_b),
                         builder.And(builder.Eq(value_a, value_b), builder.Lt(index_a, index_b)));
  const Op outputs[] = {builder.Select(a_wins, value_a, value_b), builder.Select(a_wins, index_a, index_b)};
  builder.Tuple(outputs);
  StatusOr<std::unique_ptr<Module>> module = builder.Build();
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

TEST(InterpreterReductionTest, ReduceSumOverEachDimension) {
  KILN_ASSERT_OK_AND_ASSIGN(auto add, ScalarBinaryComputation(Opcode::kAdd, ElementType::kS32, "add"));
  Builder builder("reduce");
  Op matrix = builder.ConstantLiteral(Literal::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3}));
  Op zero = builder.ConstantR0<int32_t>(0);
  const int64_t rows[] = {0}, columns[] = {1}, both[] = {0, 1};
  const Op outputs[] = {builder.Reduce(matrix, zero, *add, rows), builder.Reduce(matrix, zero, *add, columns),
                        builder.Reduce(matrix, zero, *add, both)};
  builder.Tuple(outputs);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result.tuple_elements()[0], Literal::FromVector<int32_t>({5, 7, 9}));
  EXPECT_EQ(result.tuple_elements()[1], Literal::FromVector<int32_t>({6, 15}));
  EXPECT_EQ(result.tuple_elements()[2], Literal::Scalar<int32_t>(21));
}

TEST(InterpreterReductionTest, VariadicReduceComputesArgMax) {
  std::unique_ptr<Module> argmax = ArgMaxComputation();
  ASSERT_NE(argmax, nullptr);
  Builder builder("argmax_reduce");
  Op values = builder.ConstantLiteral(Literal::FromVector<float>({3, 9, 9, 1, 7, 2}, {2, 3}));
  Op indices = builder.Iota(Shape(ElementType::kS32, {2, 3}), 1);
  const Op operands[] = {values, indices};
  const Op inits[] = {builder.ConstantR0<float>(-1e30f), builder.ConstantR0<int32_t>(-1)};
  const int64_t dims[] = {1};
  builder.Reduce(operands, inits, *argmax, dims);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result.tuple_elements()[0], Literal::FromVector<float>({9, 7}));
  EXPECT_EQ(result.tuple_elements()[1], Literal::FromVector<int32_t>({1, 1}));
}

TEST(InterpreterReductionTest, ReduceWithNonTrivialReducer) {
  // Sum of squares: acc + x*x is not a plain binary op, so it is called per element.
  Builder reducer_builder("sum_squares");
  Op acc = reducer_builder.Parameter(0, Shape::Scalar(ElementType::kF64), "acc");
  Op x = reducer_builder.Parameter(1, Shape::Scalar(ElementType::kF64), "x");
  reducer_builder.Add(acc, reducer_builder.Mul(x, x));
  KILN_ASSERT_OK_AND_ASSIGN(auto reducer, reducer_builder.Build());
  Builder builder("reduce_squares");
  Op vector = builder.ConstantR1<double>({1, 2, 3});
  const int64_t dims[] = {0};
  builder.Reduce(vector, builder.ConstantR0<double>(0.5), *reducer, dims);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result, Literal::Scalar<double>(14.5));
}

TEST(InterpreterReductionTest, ReduceWindowWithPaddingAndDilation) {
  KILN_ASSERT_OK_AND_ASSIGN(auto add, ScalarBinaryComputation(Opcode::kAdd, ElementType::kF32, "add"));
  Builder builder("reduce_window");
  Op input = builder.ConstantR1<float>({1, 2, 3, 4});
  const Op operands[] = {input};
  const Op inits[] = {builder.ConstantR0<float>(0)};
  const int64_t window[] = {2}, strides[] = {1}, base_dilation[] = {2}, window_dilation[] = {1};
  const std::pair<int64_t, int64_t> padding[] = {{1, 0}};
  // Base dilated: [1 _ 2 _ 3 _ 4] padded low by one: [_ 1 _ 2 _ 3 _ 4].
  builder.ReduceWindowWithGeneralPadding(operands, inits, *add, window, strides, base_dilation,
                                         window_dilation, padding);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result, Literal::FromVector<float>({1, 1, 2, 2, 3, 3, 4}));
}

TEST(InterpreterReductionTest, ReduceWindowWithWindowDilation) {
  KILN_ASSERT_OK_AND_ASSIGN(auto max, ScalarBinaryComputation(Opcode::kMaximum, ElementType::kS32, "max"));
  Builder builder("reduce_window_dilated");
  Op input = builder.ConstantR1<int32_t>({5, 1, 2, 8, 3});
  const Op operands[] = {input};
  const Op inits[] = {builder.ConstantR0<int32_t>(-100)};
  const int64_t window[] = {2}, strides[] = {1}, base_dilation[] = {1}, window_dilation[] = {2};
  const std::pair<int64_t, int64_t> padding[] = {{0, 0}};
  builder.ReduceWindowWithGeneralPadding(operands, inits, *max, window, strides, base_dilation,
                                         window_dilation, padding);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result, Literal::FromVector<int32_t>({5, 8, 3}));
}

TEST(InterpreterReductionTest, SelectAndScatterPicksFirstMaximum) {
  Builder select_builder("ge");
  select_builder.Ge(select_builder.Parameter(0, Shape::Scalar(ElementType::kF32), "a"),
                    select_builder.Parameter(1, Shape::Scalar(ElementType::kF32), "b"));
  KILN_ASSERT_OK_AND_ASSIGN(auto select, select_builder.Build());
  KILN_ASSERT_OK_AND_ASSIGN(auto add, ScalarBinaryComputation(Opcode::kAdd, ElementType::kF32, "add"));
  Builder builder("select_and_scatter");
  Op operand = builder.ConstantR1<float>({1, 5, 5, 2, 7, 0});
  Op source = builder.ConstantR1<float>({10, 20, 30});
  const int64_t window[] = {2}, strides[] = {2};
  builder.SelectAndScatter(operand, *select, window, strides, Padding::kValid, source,
                           builder.ConstantR0<float>(0), *add);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result, Literal::FromVector<float>({0, 10, 20, 0, 30, 0}));
}

TEST(InterpreterReductionTest, SelectAndScatterOverlappingWindowsAccumulate) {
  Builder select_builder("ge");
  select_builder.Ge(select_builder.Parameter(0, Shape::Scalar(ElementType::kS32), "a"),
                    select_builder.Parameter(1, Shape::Scalar(ElementType::kS32), "b"));
  KILN_ASSERT_OK_AND_ASSIGN(auto select, select_builder.Build());
  KILN_ASSERT_OK_AND_ASSIGN(auto add, ScalarBinaryComputation(Opcode::kAdd, ElementType::kS32, "add"));
  Builder builder("select_and_scatter_overlap");
  Op operand = builder.ConstantR1<int32_t>({1, 9, 3, 4});
  Op source = builder.ConstantR1<int32_t>({2, 6, 1});
  const int64_t window[] = {2}, strides[] = {1};
  builder.SelectAndScatter(operand, *select, window, strides, Padding::kValid, source,
                           builder.ConstantR0<int32_t>(0), *add);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result, Literal::FromVector<int32_t>({0, 8, 0, 1}));
}

TEST(InterpreterReductionTest, MapCallsTheComputationPerElement) {
  Builder body("fma");
  Op a = body.Parameter(0, Shape::Scalar(ElementType::kF32), "a");
  Op b = body.Parameter(1, Shape::Scalar(ElementType::kF32), "b");
  body.Add(body.Mul(a, b), body.ConstantR0<float>(1));
  KILN_ASSERT_OK_AND_ASSIGN(auto fma, body.Build());
  Builder builder("map");
  const Op operands[] = {builder.ConstantR1<float>({1, 2, 3}), builder.ConstantR1<float>({4, 5, 6})};
  const int64_t dims[] = {0};
  builder.Map(operands, *fma, dims);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result, Literal::FromVector<float>({5, 11, 19}));
}

TEST(InterpreterReductionTest, SortAscendingAlongLastDimension) {
  Builder builder("sort");
  builder.Sort(builder.ConstantLiteral(Literal::FromVector<float>({3, 1, 2, 9, 7, 8}, {2, 3})));
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result, Literal::FromVector<float>({1, 2, 3, 7, 8, 9}, {2, 3}));
}

TEST(InterpreterReductionTest, VariadicStableSortByKeysAlongDimensionZero) {
  // Compare keys only, descending: equal keys keep their original order.
  Builder comparator_builder("gt_keys");
  Op key_a = comparator_builder.Parameter(0, Shape::Scalar(ElementType::kS32), "key_a");
  Op key_b = comparator_builder.Parameter(1, Shape::Scalar(ElementType::kS32), "key_b");
  comparator_builder.Parameter(2, Shape::Scalar(ElementType::kF32), "value_a");
  comparator_builder.Parameter(3, Shape::Scalar(ElementType::kF32), "value_b");
  Op key_greater = comparator_builder.Gt(key_a, key_b);
  KILN_ASSERT_OK_AND_ASSIGN(auto comparator, comparator_builder.Build(key_greater));
  Builder builder("sort_pairs");
  const Op operands[] = {builder.ConstantR1<int32_t>({1, 3, 1, 2, 3}),
                         builder.ConstantR1<float>({10, 20, 30, 40, 50})};
  builder.Sort(operands, *comparator, 0, true);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result.tuple_elements()[0], Literal::FromVector<int32_t>({3, 3, 2, 1, 1}));
  EXPECT_EQ(result.tuple_elements()[1], Literal::FromVector<float>({20, 50, 40, 10, 30}));
}

TEST(InterpreterReductionTest, SortWithAnInconsistentComparatorDoesNotCrash) {
  // "always true" is not a strict weak order; the result order is unspecified
  // but every element must still be present.
  Builder comparator_builder("always");
  comparator_builder.Parameter(0, Shape::Scalar(ElementType::kS32), "a");
  comparator_builder.Parameter(1, Shape::Scalar(ElementType::kS32), "b");
  comparator_builder.ConstantR0<bool>(true);
  KILN_ASSERT_OK_AND_ASSIGN(auto comparator, comparator_builder.Build());
  Builder builder("sort_bad");
  std::vector<int32_t> values(100);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int32_t>((i * 37) % 100);
  const Op operands[] = {builder.ConstantR1<int32_t>(values)};
  builder.Sort(operands, *comparator, 0, false);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  std::vector<int32_t> sorted(result.data<int32_t>().begin(), result.data<int32_t>().end());
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) EXPECT_EQ(sorted[i], static_cast<int32_t>(i));
}

TEST(InterpreterReductionTest, CrossReplicaSumWithOneReplicaIsIdentity) {
  Builder builder("all_reduce");
  builder.CrossReplicaSum(builder.ConstantR1<float>({1, 2}));
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result, Literal::FromVector<float>({1, 2}));
}

}  // namespace
}  // namespace kiln
