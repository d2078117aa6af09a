// Reverse mode over the shape ops, reductions and dot_general: gradients
// against f64 central differences on random shapes (seeded), on the
// interpreter and cpu (tests/unit/autodiff_gradient_check.h).
#include <random>

#include "tests/unit/autodiff_gradient_check.h"

namespace kiln {
namespace {

using testing::ExpectGradientsMatchFiniteDifferences;
using testing::RandomF64;
using testing::RandomF64Shape;

using testing::BuildModule;
using testing::F64;

std::vector<Literal> RandomInputs(const std::vector<Shape>& shapes, std::mt19937& random) {
  std::vector<Literal> inputs;
  for (const Shape& shape : shapes) inputs.push_back(RandomF64(shape, random));
  return inputs;
}

std::vector<int64_t> AllParameters(size_t count) {
  std::vector<int64_t> all;
  for (size_t i = 0; i < count; ++i) all.push_back(static_cast<int64_t>(i));
  return all;
}

void CheckStructuralGradient(const std::vector<Shape>& shapes, auto body, uint32_t seed) {
  std::mt19937 random(seed);
  auto module = BuildModule(shapes, body);
  ASSERT_NE(module, nullptr);
  ExpectGradientsMatchFiniteDifferences(*module, AllParameters(shapes.size()), RandomInputs(shapes, random),
                                        seed);
}

TEST(AutodiffStructuralTest, BroadcastAddsDimensions) {
  CheckStructuralGradient(
      {F64({3, 4})},
      [](Builder& b, std::vector<Op>& p) {
        const int64_t out[] = {2, 3, 4};
        const int64_t dims[] = {1, 2};
        return b.BroadcastInDim(p[0], out, dims);
      },
      1);
  CheckStructuralGradient(
      {F64({})},
      [](Builder& b, std::vector<Op>& p) {
        const int64_t out[] = {2, 3};
        return b.BroadcastInDim(p[0], out, {});
      },
      2);
}

TEST(AutodiffStructuralTest, ReshapeTransposeReverse) {
  std::mt19937 random(3);
  for (int trial = 0; trial < 3; ++trial) {
    const Shape shape = RandomF64Shape(random);
    CheckStructuralGradient(
        {shape},
        [&](Builder& b, std::vector<Op>& p) {
          std::vector<int64_t> permutation;
          for (int64_t d = shape.rank() - 1; d >= 0; --d) permutation.push_back(d);
          const int64_t reversed[] = {0};
          const int64_t flat[] = {shape.element_count()};
          Op moved = b.Rev(b.Transpose(b.Sin(p[0]), permutation), reversed);
          return b.Reshape(moved, flat);
        },
        static_cast<uint32_t>(trial));
  }
}

TEST(AutodiffStructuralTest, StridedSlice) {
  CheckStructuralGradient(
      {F64({5, 7})},
      [](Builder& b, std::vector<Op>& p) {
        const int64_t starts[] = {1, 0};
        const int64_t limits[] = {5, 7};
        const int64_t strides[] = {2, 3};
        return b.Slice(b.Exp(p[0]), starts, limits, strides);
      },
      4);
}

// A start index from an integer parameter, in range and out of range (then
// clamped): the cotangent goes back to the elements the slice read.
TEST(AutodiffStructuralTest, DynamicSliceAndDynamicUpdateSlice) {
  for (int32_t start : {1, 5}) {  // 5 is clamped to the last window that fits
    SCOPED_TRACE(start);
    std::mt19937 random(30);
    const Shape s32 = Shape::Scalar(ElementType::kS32);
    {
      Builder builder("dynamic_slice");
      Op x = builder.Parameter(0, F64({4, 5}), "x");
      Op i = builder.Parameter(1, s32, "i");
      const Op starts[] = {builder.ConstantR0<int32_t>(0), i};
      const int64_t sizes[] = {3, 2};
      builder.Sin(builder.DynamicSlice(builder.Exp(x), starts, sizes));
      KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
      ExpectGradientsMatchFiniteDifferences(
          *module, {0}, {RandomF64(F64({4, 5}), random), Literal::Scalar<int32_t>(start)});
    }
    {
      Builder builder("dynamic_update_slice");
      Op x = builder.Parameter(0, F64({4, 5}), "x");
      Op u = builder.Parameter(1, F64({2, 3}), "u");
      Op i = builder.Parameter(2, s32, "i");
      const Op starts[] = {i, builder.ConstantR0<int32_t>(1)};
      builder.Mul(builder.DynamicUpdateSlice(builder.Sin(x), builder.Mul(u, u), starts), x);
      KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
      ExpectGradientsMatchFiniteDifferences(
          *module, {0, 1},
          {RandomF64(F64({4, 5}), random), RandomF64(F64({2, 3}), random), Literal::Scalar<int32_t>(start)});
    }
  }
}

// Rows taken by index (repeats accumulate; an index past the end is
// clamped as gather clamps it) and 2-d windows at clamped corners.
TEST(AutodiffStructuralTest, GatherScattersTheCotangentBack) {
  std::mt19937 random(31);
  {
    GatherDimensionNumbers rows;
    rows.offset_dims = {1};
    rows.collapsed_slice_dims = {0};
    rows.start_index_map = {0};
    rows.index_vector_dim = 1;
    for (bool implicit : {false, true}) {
      Builder builder("take_rows");
      Op x = builder.Parameter(0, F64({5, 3}), "x");
      const std::vector<int32_t> picks = {0, 2, 2, 7};
      Op indices = implicit ? builder.ConstantR1<int32_t>(picks)
                            : builder.ConstantLiteral(Literal::FromVector<int32_t>(picks, {4, 1}));
      const int64_t sizes[] = {1, 3};
      builder.Sin(builder.Gather(builder.Mul(x, x), indices, rows, sizes));
      KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
      ExpectGradientsMatchFiniteDifferences(*module, {0}, {RandomF64(F64({5, 3}), random)});
    }
  }
  {
    GatherDimensionNumbers windows;
    windows.offset_dims = {1, 2};
    windows.start_index_map = {0, 1};
    windows.index_vector_dim = 1;
    Builder builder("windows");
    Op x = builder.Parameter(0, F64({4, 5}), "x");
    Op indices = builder.ConstantLiteral(Literal::FromVector<int64_t>({0, 1, 3, 4, 1, 1}, {3, 2}));
    const int64_t sizes[] = {2, 3};
    builder.Exp(builder.Gather(x, indices, windows, sizes));
    KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
    ExpectGradientsMatchFiniteDifferences(*module, {0}, {RandomF64(F64({4, 5}), random)});
  }
}

// Scatter-add: repeated rows accumulate, a window that does not fit is
// dropped (its update gets no gradient); other combiners are refused.
// The combiner (a, b) -> b: the update overwrites.
std::unique_ptr<Module> Overwrite() {
  Builder builder("overwrite");
  builder.Parameter(0, Shape::Scalar(ElementType::kF64), "old");
  Op update = builder.Parameter(1, Shape::Scalar(ElementType::kF64), "new");
  auto module = builder.Build(update);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

// Repeated indices (the last update kept by an overwrite gets the
// cotangent) and a dropped window, under add, overwrite and subtract (old -
// update, linear, so the order of repeated indices does not matter).
TEST(AutodiffStructuralTest, ScatterAddOverwriteAndSubtract) {
  std::mt19937 random(32);
  ScatterDimensionNumbers rows;
  rows.update_window_dims = {1};
  rows.inserted_window_dims = {0};
  rows.scatter_dims_to_operand_dims = {0};
  rows.index_vector_dim = 1;
  KILN_ASSERT_OK_AND_ASSIGN(auto add,
                            testing::ScalarBinaryComputation(Opcode::kAdd, ElementType::kF64, "add"));
  KILN_ASSERT_OK_AND_ASSIGN(
      auto subtract, testing::ScalarBinaryComputation(Opcode::kSubtract, ElementType::kF64, "subtract"));
  auto overwrite = Overwrite();
  ASSERT_NE(overwrite, nullptr);
  for (const Module* combiner : {add.get(), overwrite.get(), subtract.get()}) {
    Builder builder("scatter");
    Op x = builder.Parameter(0, F64({5, 3}), "x");
    Op u = builder.Parameter(1, F64({4, 3}), "u");
    Op indices = builder.ConstantLiteral(Literal::FromVector<int32_t>({0, 2, 2, 7}, {4, 1}));
    builder.Sin(builder.Scatter(builder.Mul(x, x), indices, builder.Mul(u, u), *combiner, rows));
    KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
    ExpectGradientsMatchFiniteDifferences(*module, {0, 1},
                                          {RandomF64(F64({5, 3}), random), RandomF64(F64({4, 3}), random)});
  }
}

// Scatters with every differentiated combiner (overwrite, add, multiply,
// maximum, minimum) of random windows at random (repeated, some out of
// range) row and column starts, explicit and implicit index vectors.
TEST(AutodiffStructuralTest, RandomScattersOfEveryCombiner) {
  std::mt19937 random(33);
  auto pick = [&](int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(random);
  };
  KILN_ASSERT_OK_AND_ASSIGN(auto add,
                            testing::ScalarBinaryComputation(Opcode::kAdd, ElementType::kF64, "add"));
  KILN_ASSERT_OK_AND_ASSIGN(
      auto multiply, testing::ScalarBinaryComputation(Opcode::kMultiply, ElementType::kF64, "multiply"));
  KILN_ASSERT_OK_AND_ASSIGN(auto max,
                            testing::ScalarBinaryComputation(Opcode::kMaximum, ElementType::kF64, "max"));
  KILN_ASSERT_OK_AND_ASSIGN(auto min,
                            testing::ScalarBinaryComputation(Opcode::kMinimum, ElementType::kF64, "min"));
  auto overwrite = Overwrite();
  ASSERT_NE(overwrite, nullptr);
  for (int trial = 0; trial < 6; ++trial) {
    const int64_t rows = pick(2, 5);
    const int64_t columns = pick(2, 4);
    const int64_t count = pick(1, 5);
    const int64_t width = pick(1, columns);
    const bool both = trial % 2 == 1;  // index rows and columns (else rows, implicit index vector)
    std::vector<int32_t> starts;
    for (int64_t i = 0; i < count * (both ? 2 : 1); ++i) {
      starts.push_back(static_cast<int32_t>(pick(0, (both && i % 2 == 1) ? columns - width + 1 : rows)));
    }
    ScatterDimensionNumbers numbers;
    numbers.update_window_dims = {1};
    numbers.inserted_window_dims = {0};
    numbers.scatter_dims_to_operand_dims = both ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0};
    numbers.index_vector_dim = 1;
    const Shape operand = F64({rows, columns});
    const Shape updates = F64({count, width});
    SCOPED_TRACE(operand.ToString() + " updates " + updates.ToString() +
                 (both ? " rows and columns" : " rows"));
    for (const Module* combiner : {overwrite.get(), add.get(), multiply.get(), max.get(), min.get()}) {
      Builder builder("scatter");
      Op x = builder.Parameter(0, operand, "x");
      Op u = builder.Parameter(1, updates, "u");
      Op indices = builder.ConstantLiteral(both ? Literal::FromVector<int32_t>(starts, {count, 2})
                                                : Literal::FromVector<int32_t>(starts, {count}));
      builder.Sin(builder.Scatter(builder.Mul(x, x), indices, builder.Exp(u), *combiner, numbers));
      KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
      ExpectGradientsMatchFiniteDifferences(*module, {0, 1},
                                            {RandomF64(operand, random), RandomF64(updates, random)},
                                            static_cast<uint32_t>(trial));
    }
  }
}

// The gradient of sum(scatter(x, indices, u)) for the combiner `opcode`, at
// exact values, on the interpreter and cpu: x's gradient, then u's.
void ExpectScatterGradients(Opcode opcode, const std::vector<double>& x, const std::vector<int32_t>& indices,
                            const std::vector<double>& u, const std::vector<double>& x_gradient,
                            const std::vector<double>& u_gradient) {
  KILN_ASSERT_OK_AND_ASSIGN(auto combiner, testing::ScalarBinaryComputation(opcode, ElementType::kF64, "c"));
  KILN_ASSERT_OK_AND_ASSIGN(auto add,
                            testing::ScalarBinaryComputation(Opcode::kAdd, ElementType::kF64, "add"));
  ScatterDimensionNumbers elements;
  elements.inserted_window_dims = {0};
  elements.scatter_dims_to_operand_dims = {0};
  elements.index_vector_dim = 1;
  const auto x_size = static_cast<int64_t>(x.size());
  const auto u_size = static_cast<int64_t>(u.size());
  Builder builder("scatter_sum");
  Op scattered =
      builder.Scatter(builder.Parameter(0, F64({x_size}), "x"), builder.ConstantR1<int32_t>(indices),
                      builder.Parameter(1, F64({u_size}), "u"), *combiner, elements);
  const int64_t all[] = {0};
  builder.Reduce(scattered, builder.ConstantLiteral(Literal::Scalar<double>(0.0)), *add, all);
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  KILN_ASSERT_OK_AND_ASSIGN(auto vjp, autodiff::BuildVjp(*module, std::vector<int64_t>{0, 1}));
  const std::vector<Literal> inputs = {Literal::FromVector(x), Literal::FromVector(u)};
  for (const char* backend_name : {"interpreter", "cpu"}) {
    SCOPED_TRACE(backend_name);
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> backend, CreateBackend(backend_name));
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable,
                              backend->Compile(*vjp, CompileOptions{}));
    const std::vector<Literal> leaves = testing::RunLeaves(*executable, *backend, inputs);
    ASSERT_EQ(leaves.size(), 3u);
    for (size_t i = 0; i < x_gradient.size(); ++i) {
      EXPECT_NEAR(leaves[1].data<double>()[i], x_gradient[i], 1e-12) << "x element " << i;
    }
    for (size_t i = 0; i < u_gradient.size(); ++i) {
      EXPECT_NEAR(leaves[2].data<double>()[i], u_gradient[i], 1e-12) << "u element " << i;
    }
  }
}

TEST(AutodiffStructuralTest, ScatterMaxAndMinShareTiesAsJax) {
  // Two equal updates win element 1: half each; where the operand equals
  // them too, a third each. An index out of range is dropped.
  ExpectScatterGradients(Opcode::kMaximum, {0, 0, 0}, {1, 1, 2, 9}, {5, 5, -1, 7}, {1, 0, 1},
                         {0.5, 0.5, 0, 0});
  ExpectScatterGradients(Opcode::kMaximum, {0, 5, 0}, {1, 1, 2}, {5, 5, -1}, {1, 1.0 / 3, 1},
                         {1.0 / 3, 1.0 / 3, 0});
  ExpectScatterGradients(Opcode::kMinimum, {4, 2}, {0, 0, 1}, {1, 3, 2}, {0, 0.5}, {1, 0, 0.5});
}

TEST(AutodiffStructuralTest, ScatterMultiplyWithZeroUpdatesAndRepeatedIndices) {
  // Element 0 gets 0 and 4: x0's gradient is 0 * 4, the zero update's is
  // x0 * 4, the other's x0 * 0; two zeros at one element give both 0.
  ExpectScatterGradients(Opcode::kMultiply, {2, 3, 1}, {0, 0, 1, 2, 2}, {0, 4, 5, 0, 0}, {0, 5, 0},
                         {8, 0, 3, 0, 0});
}

TEST(AutodiffStructuralTest, Concatenate) {
  CheckStructuralGradient(
      {F64({2, 3}), F64({2, 1}), F64({2, 4})},
      [](Builder& b, std::vector<Op>& p) {
        const Op parts[] = {p[0], b.Tanh(p[1]), p[2]};
        return b.ConcatInDim(parts, 1);
      },
      5);
}

TEST(AutodiffStructuralTest, PadWithNegativeAndInteriorPadding) {
  CheckStructuralGradient(
      {F64({4, 3}), F64({})},
      [](Builder& b, std::vector<Op>& p) {
        const PaddingDimension config[] = {{-1, 2, 1}, {2, -1, 0}};
        return b.Pad(b.Mul(p[0], p[0]), p[1], config);
      },
      6);
}

TEST(AutodiffStructuralTest, ReduceSumOverSomeDimensionsWithInitialValue) {
  KILN_ASSERT_OK_AND_ASSIGN(auto add,
                            testing::ScalarBinaryComputation(Opcode::kAdd, ElementType::kF64, "add"));
  CheckStructuralGradient(
      {F64({3, 4, 2}), F64({})},
      [&](Builder& b, std::vector<Op>& p) {
        const int64_t dims[] = {0, 2};
        return b.Reduce(b.Sin(p[0]), p[1], *add, dims);
      },
      7);
}

TEST(AutodiffStructuralTest, ReduceMaxAndMinAtGenericPoints) {
  for (Opcode opcode : {Opcode::kMaximum, Opcode::kMinimum}) {
    KILN_ASSERT_OK_AND_ASSIGN(auto reducer, testing::ScalarBinaryComputation(opcode, ElementType::kF64, "r"));
    CheckStructuralGradient(
        {F64({3, 5})},
        [&](Builder& b, std::vector<Op>& p) {
          const int64_t dims[] = {1};
          const double init = opcode == Opcode::kMaximum ? -1e30 : 1e30;
          return b.Reduce(p[0], b.ConstantR0<double>(init), *reducer, dims);
        },
        8);
  }
}

// JAX's reduce_max gives each of the equal maxima an equal share.
TEST(AutodiffStructuralTest, ReduceMaxSharesTheCotangentAmongTies) {
  KILN_ASSERT_OK_AND_ASSIGN(auto max,
                            testing::ScalarBinaryComputation(Opcode::kMaximum, ElementType::kF64, "max"));
  Builder builder("max_ties");
  const int64_t dims[] = {1};
  builder.Reduce(builder.Parameter(0, F64({2, 4}), "x"), builder.ConstantR0<double>(-1e30), *max, dims);
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  KILN_ASSERT_OK_AND_ASSIGN(auto vjp, autodiff::BuildVjp(*module, std::vector<int64_t>{0}));
  const Literal inputs[] = {Literal::FromVector<double>({1, 3, 3, 2, 7, 7, 7, 0}, {2, 4}),
                            Literal::FromVector<double>({6, 9})};
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Run(*vjp, inputs));
  EXPECT_EQ(result.tuple_elements()[0], Literal::FromVector<double>({3, 7}));
  EXPECT_EQ(result.tuple_elements()[1], Literal::FromVector<double>({0, 3, 3, 0, 3, 3, 3, 0}, {2, 4}));
}

struct DotCase {
  std::vector<int64_t> lhs, rhs;
  DotDimensionNumbers numbers;
};

TEST(AutodiffStructuralTest, DotGeneralBothOperands) {
  DotDimensionNumbers matmul;
  matmul.lhs_contracting_dimensions = {1};
  matmul.rhs_contracting_dimensions = {0};
  DotDimensionNumbers batched;
  batched.lhs_batch_dimensions = {0};
  batched.rhs_batch_dimensions = {0};
  batched.lhs_contracting_dimensions = {2};
  batched.rhs_contracting_dimensions = {1};
  // Batch dimensions not in front, two contracting dimensions in crossed
  // order, free dimensions on both sides.
  DotDimensionNumbers scrambled;
  scrambled.lhs_batch_dimensions = {1};
  scrambled.rhs_batch_dimensions = {2};
  scrambled.lhs_contracting_dimensions = {3, 0};
  scrambled.rhs_contracting_dimensions = {0, 3};
  DotDimensionNumbers outer;  // no contraction at all
  const DotCase cases[] = {
      {{3, 4}, {4, 2}, matmul},
      {{2, 3, 4}, {2, 4, 5}, batched},
      {{3, 2, 4, 5}, {5, 3, 2, 3}, scrambled},
      {{3}, {2}, outer},
  };
  uint32_t seed = 10;
  for (const DotCase& c : cases) {
    CheckStructuralGradient(
        {F64(c.lhs), F64(c.rhs)},
        [&](Builder& b, std::vector<Op>& p) { return b.DotGeneral(p[0], p[1], c.numbers); }, seed++);
  }
}

TEST(AutodiffStructuralTest, TupleResultsTakeOneCotangentEach) {
  KILN_ASSERT_OK_AND_ASSIGN(auto add,
                            testing::ScalarBinaryComputation(Opcode::kAdd, ElementType::kF64, "add"));
  CheckStructuralGradient(
      {F64({2, 3}), F64({3})},
      [&](Builder& b, std::vector<Op>& p) {
        const int64_t dims[] = {0};
        Op sum = b.Reduce(b.Mul(p[0], p[0]), b.ConstantR0<double>(0.0), *add, dims);
        Op inner = b.Tuple(std::vector<Op>{b.Mul(sum, p[1]), b.Sin(p[0])});
        Op nested = b.Tuple(std::vector<Op>{inner, b.Cos(p[1])});
        // A get-tuple-element on the way: the gradient flows through tuples.
        return b.Tuple(std::vector<Op>{b.GetTupleElement(nested, 0), b.Exp(b.GetTupleElement(inner, 0))});
      },
      20);
}

}  // namespace
}  // namespace kiln
