// Scatter combiners in both modes (core/autodiff/scatter_rules.cc,
// jvp_scatter_rules.cc): forward mode of multiply, maximum and minimum
// scatters against f64 central differences and <w, J v> == <J^T w, v>
// from reverse mode, with repeated indices and dropped windows; exact
// tangents at ties (JAX's scatter_max rule) and with zero updates;
// subtract with repeated indices; any differentiable combiner when no two
// updates land on one element (unique_indices, or constant indices with
// disjoint windows); and the refusal, naming the op and the combiner, when
// indices may repeat.
#include <random>
#include <string>
#include <vector>

#include "tests/unit/autodiff_gradient_check.h"
#include "tests/unit/autodiff_jvp_check.h"

namespace kiln {
namespace {

using testing::F64;
using testing::RandomF64;

std::unique_ptr<Module> Combiner(Opcode opcode) {
  auto combiner = testing::ScalarBinaryComputation(opcode, ElementType::kF64, "combine");
  EXPECT_TRUE(combiner.ok()) << combiner.status().ToString();
  return combiner.ok() ? std::move(combiner).value() : nullptr;
}

// (old, update) -> old * sin(update) + update * update: differentiable, but
// its result depends on the order in which repeated indices are applied.
std::unique_ptr<Module> Blend() {
  Builder builder("blend");
  Op old = builder.Parameter(0, Shape::Scalar(ElementType::kF64), "old");
  Op update = builder.Parameter(1, Shape::Scalar(ElementType::kF64), "update");
  auto module =
      builder.Build(builder.Add(builder.Mul(old, builder.Sin(update)), builder.Mul(update, update)));
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

ScatterDimensionNumbers RowWindows(bool rows_and_columns) {
  ScatterDimensionNumbers numbers;
  numbers.update_window_dims = {1};
  numbers.inserted_window_dims = {0};
  numbers.scatter_dims_to_operand_dims =
      rows_and_columns ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0};
  numbers.index_vector_dim = 1;
  return numbers;
}

// sin(scatter(x * x, indices, exp(u))) with constant `indices`.
std::unique_ptr<Module> ScatterModule(const Shape& operand, const Shape& updates, const Literal& indices,
                                      const Module& combiner, const ScatterDimensionNumbers& numbers,
                                      bool unique_indices = false) {
  Builder builder("scatter");
  Op x = builder.Parameter(0, operand, "x");
  Op u = builder.Parameter(1, updates, "u");
  builder.Sin(builder.Scatter(builder.Mul(x, x), builder.ConstantLiteral(indices), builder.Exp(u), combiner,
                              numbers, false, unique_indices));
  auto module = builder.Build();
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

// Random windows at random (repeated, some out of range) row and column
// starts, explicit and implicit index vectors: forward mode of multiply,
// maximum, minimum and subtract against differences and reverse mode, and
// reverse mode of subtract against differences.
TEST(AutodiffScatterCombinerTest, RepeatedIndicesInBothModes) {
  std::mt19937 random(41);
  auto pick = [&](int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(random);
  };
  for (int trial = 0; trial < 6; ++trial) {
    const int64_t rows = pick(2, 5);
    const int64_t columns = pick(2, 4);
    const int64_t count = pick(2, 6);
    const int64_t width = pick(1, columns);
    const bool both = trial % 2 == 1;
    std::vector<int32_t> starts;
    for (int64_t i = 0; i < count * (both ? 2 : 1); ++i) {
      starts.push_back(static_cast<int32_t>(pick(0, (both && i % 2 == 1) ? columns - width + 1 : rows)));
    }
    const Literal indices = both ? Literal::FromVector<int32_t>(starts, {count, 2})
                                 : Literal::FromVector<int32_t>(starts, {count, 1});
    const Shape operand = F64({rows, columns});
    const Shape updates = F64({count, width});
    SCOPED_TRACE(operand.ToString() + " updates " + updates.ToString() + " indices " + indices.ToString());
    for (Opcode opcode : {Opcode::kMultiply, Opcode::kMaximum, Opcode::kMinimum, Opcode::kSubtract}) {
      SCOPED_TRACE(OpcodeName(opcode));
      auto combiner = Combiner(opcode);
      ASSERT_NE(combiner, nullptr);
      auto module = ScatterModule(operand, updates, indices, *combiner, RowWindows(both));
      ASSERT_NE(module, nullptr);
      const std::vector<Literal> inputs = {RandomF64(operand, random), RandomF64(updates, random)};
      if (opcode == Opcode::kSubtract) {
        testing::ExpectGradientsMatchFiniteDifferences(*module, {0, 1}, inputs, static_cast<uint32_t>(trial));
      }
      testing::ExpectJvpMatches(*module, {0, 1}, inputs, static_cast<uint32_t>(trial) + 100);
      testing::ExpectJvpMatches(*module, {1}, inputs, static_cast<uint32_t>(trial) + 200);
    }
  }
}

// The tangent of scatter(x, indices, u) for the combiner `opcode` along
// (dx, du), at exact values, on the interpreter and cpu.
void ExpectScatterTangent(Opcode opcode, const std::vector<double>& x, const std::vector<int32_t>& indices,
                          const std::vector<double>& u, const std::vector<double>& dx,
                          const std::vector<double>& du, const std::vector<double>& want) {
  auto combiner = Combiner(opcode);
  ASSERT_NE(combiner, nullptr);
  ScatterDimensionNumbers elements;
  elements.inserted_window_dims = {0};
  elements.scatter_dims_to_operand_dims = {0};
  elements.index_vector_dim = 1;
  const auto x_size = static_cast<int64_t>(x.size());
  const auto u_size = static_cast<int64_t>(u.size());
  Builder builder("scatter");
  builder.Scatter(builder.Parameter(0, F64({x_size}), "x"), builder.ConstantR1<int32_t>(indices),
                  builder.Parameter(1, F64({u_size}), "u"), *combiner, elements);
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  KILN_ASSERT_OK_AND_ASSIGN(auto jvp, autodiff::BuildJvp(*module, std::vector<int64_t>{0, 1}));
  const std::vector<Literal> inputs = {Literal::FromVector(x), Literal::FromVector(u),
                                       Literal::FromVector(dx), Literal::FromVector(du)};
  for (const char* backend_name : {"interpreter", "cpu"}) {
    SCOPED_TRACE(backend_name);
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> backend, CreateBackend(backend_name));
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable,
                              backend->Compile(*jvp, CompileOptions{}));
    const std::vector<Literal> leaves = testing::RunLeaves(*executable, *backend, inputs);
    ASSERT_EQ(leaves.size(), 2u);
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(leaves[1].data<double>()[i], want[i], 1e-12) << "tangent element " << i;
    }
  }
}

TEST(AutodiffScatterCombinerTest, TiesShareTheTangentAsJax) {
  // Two equal updates win element 1: the mean of their tangents; where the
  // operand equals them too, the mean of the three. Element 2 keeps the
  // operand (update -1 loses); index 9 is dropped.
  ExpectScatterTangent(Opcode::kMaximum, {0, 0, 0}, {1, 1, 2, 9}, {5, 5, -1, 7}, {1, 2, 3}, {10, 20, 30, 40},
                       {1, 15, 3});
  ExpectScatterTangent(Opcode::kMaximum, {0, 5, 0}, {1, 1, 2}, {5, 5, -1}, {1, 2, 3}, {10, 20, 30},
                       {1, 32.0 / 3, 3});
  ExpectScatterTangent(Opcode::kMinimum, {4, 2}, {0, 0, 1}, {1, 3, 2}, {1, 2}, {10, 20, 30}, {10, 16});
}

TEST(AutodiffScatterCombinerTest, MultiplyTangentWithZeroUpdatesAndRepeatedIndices) {
  // Element 0 gets 0 and 4: x0 * (du0 * 4 + du1 * 0) + dx0 * 0; element 2
  // gets two zeros: 0 whatever the tangents; element 1 gets 5.
  ExpectScatterTangent(Opcode::kMultiply, {2, 3, 1}, {0, 0, 1, 2, 2}, {0, 4, 5, 0, 0}, {1, 2, 3},
                       {10, 20, 30, 40, 50}, {80, 2 * 5 + 3 * 30, 0});
}

// A combiner whose result depends on the order of repeated indices is
// differentiated in both modes when no two updates land on one element:
// unique_indices=true, or constant indices whose windows are disjoint
// (starts that differ but whose windows overlap do not count).
TEST(AutodiffScatterCombinerTest, AnyCombinerWhenUpdatesAreDisjoint) {
  auto blend = Blend();
  ASSERT_NE(blend, nullptr);
  std::mt19937 random(42);
  struct Case {
    Literal indices;
    Shape updates;
    bool unique_indices;
  };
  const Case cases[] = {
      // Rows 3, 0 and 5 (dropped: out of range) of a 4 x 3 operand.
      {Literal::FromVector<int32_t>({3, 0, 5}, {3, 1}), F64({3, 3}), false},
      // 1 x 2 windows at (0, 0), (0, 2) and (2, 1): disjoint.
      {Literal::FromVector<int32_t>({0, 0, 0, 2, 2, 1}, {3, 2}), F64({3, 2}), false},
      // The same rows with the scatter saying its indices are unique.
      {Literal::FromVector<int32_t>({1, 2}, {2, 1}), F64({2, 3}), true},
  };
  for (const Case& c : cases) {
    const bool both = c.indices.shape().dimensions(1) == 2;
    SCOPED_TRACE(c.indices.ToString());
    auto module =
        ScatterModule(F64({4, 3}), c.updates, c.indices, *blend, RowWindows(both), c.unique_indices);
    ASSERT_NE(module, nullptr);
    const std::vector<Literal> inputs = {RandomF64(F64({4, 3}), random), RandomF64(c.updates, random)};
    testing::ExpectGradientsMatchFiniteDifferences(*module, {0, 1}, inputs, 3);
    testing::ExpectJvpMatches(*module, {0, 1}, inputs, 4);
    testing::ExpectJvpMatches(*module, {0}, inputs, 5);
  }
}

// Indices given at run time with unique_indices=true: the scatter's word.
TEST(AutodiffScatterCombinerTest, AnyCombinerWithUniqueIndicesFromAParameter) {
  auto blend = Blend();
  ASSERT_NE(blend, nullptr);
  Builder builder("scatter");
  Op x = builder.Parameter(0, F64({5, 2}), "x");
  Op indices = builder.Parameter(1, Shape(ElementType::kS32, {3, 1}), "indices");
  Op u = builder.Parameter(2, F64({3, 2}), "u");
  builder.Tanh(builder.Scatter(builder.Exp(x), indices, builder.Mul(u, u), *blend, RowWindows(false), false,
                               /*unique_indices=*/true));
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  std::mt19937 random(43);
  const std::vector<Literal> inputs = {RandomF64(F64({5, 2}), random),
                                       Literal::FromVector<int32_t>({4, 1, 2}, {3, 1}),
                                       RandomF64(F64({3, 2}), random)};
  testing::ExpectGradientsMatchFiniteDifferences(*module, {0, 2}, inputs, 6);
  testing::ExpectJvpMatches(*module, {0, 2}, inputs, 7);
}

// Where updates may land on one element, both modes refuse such a combiner
// with INVALID_ARGUMENT naming the op and the combiner.
TEST(AutodiffScatterCombinerTest, OrderDependentCombinerWithRepeatableIndicesIsRefused) {
  auto blend = Blend();
  ASSERT_NE(blend, nullptr);
  const Literal repeated = Literal::FromVector<int32_t>({1, 3, 1}, {3, 1});
  // Starts (0, 0) and (0, 1) differ, but their 1 x 2 windows share (0, 1).
  const Literal overlapping = Literal::FromVector<int32_t>({0, 0, 0, 1}, {2, 2});
  auto rows = ScatterModule(F64({4, 3}), F64({3, 3}), repeated, *blend, RowWindows(false));
  auto windows = ScatterModule(F64({4, 3}), F64({2, 2}), overlapping, *blend, RowWindows(true));
  Builder builder("run_time_indices");
  builder.Scatter(builder.Parameter(0, F64({4, 3}), "x"),
                  builder.Parameter(1, Shape(ElementType::kS32, {2, 1}), "indices"),
                  builder.Parameter(2, F64({2, 3}), "u"), *blend, RowWindows(false));
  KILN_ASSERT_OK_AND_ASSIGN(auto run_time, builder.Build());
  for (const Module* module : {rows.get(), windows.get(), run_time.get()}) {
    ASSERT_NE(module, nullptr);
    const int64_t wrt = module == run_time.get() ? 2 : 1;
    for (const bool reverse : {true, false}) {
      const Status status = reverse ? autodiff::BuildVjp(*module, std::vector<int64_t>{wrt}).status()
                                    : autodiff::BuildJvp(*module, std::vector<int64_t>{wrt}).status();
      EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
      for (const char* part : {reverse ? "kiln grad" : "kiln jvp", "'scatter'", "combiner 'blend'",
                               "unspecified order", "unique_indices=true"}) {
        EXPECT_NE(status.message().find(part), std::string::npos) << part << " in " << status.message();
      }
    }
  }
}

}  // namespace
}  // namespace kiln
