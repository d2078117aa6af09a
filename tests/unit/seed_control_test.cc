// Worked examples of the operation-semantics seed for control flow, host
// communication, extension and random numbers: While, Call, Conditional,
// Infeed, CustomCall, RngUniform, RngNormal, RngBernoulli.
#include <cmath>
#include <memory>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "tests/unit/test_util.h"

namespace kiln {
namespace {

using Dims = std::vector<int64_t>;
using kiln::testing::LiteralNear;
using kiln::testing::RunsTo;

const Shape kCounter = Shape::Scalar(ElementType::kS32);
const Shape kVector10(ElementType::kF32, {10});
const Shape kLoopState = Shape::Tuple({kCounter, kVector10});

std::vector<float> OneToTen() { return {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}; }

// The seed's while_test loop: state (int32 iteration, float[10] accumulator);
// while (state(0) < 1000) state = {state(0) + 1, state(1) + constant_vector}.
struct SeedLoop {
  std::unique_ptr<Module> condition, body;
};

SeedLoop MakeSeedLoop() {
  SeedLoop loop;
  Builder condition("condition");
  const Op state = condition.Parameter(0, kLoopState, "state");
  condition.Lt(condition.GetTupleElement(state, 0), condition.ConstantR0<int32_t>(1000));
  auto built_condition = condition.Build();
  EXPECT_TRUE(built_condition.ok()) << built_condition.status().ToString();
  if (built_condition.ok()) loop.condition = std::move(built_condition).value();

  Builder body("body");
  const Op result = body.Parameter(0, kLoopState, "result");
  const Op iteration = body.Add(body.GetTupleElement(result, 0), body.ConstantR0<int32_t>(1));
  const Op new_vector = body.Add(body.GetTupleElement(result, 1), body.ConstantR1<float>(OneToTen()));
  body.Tuple(std::vector<Op>{iteration, new_vector});
  auto built_body = body.Build();
  EXPECT_TRUE(built_body.ok()) << built_body.status().ToString();
  if (built_body.ok()) loop.body = std::move(built_body).value();
  return loop;
}

Literal ExpectedLoopResult() {
  std::vector<float> sums;
  for (float v : OneToTen()) sums.push_back(1000 * v);
  return Literal::Tuple({Literal::Scalar<int32_t>(1000), Literal::FromVector<float>(sums)});
}

TEST(SeedWhile, ThousandIterationsAccumulateAConstantVector) {
  SeedLoop loop = MakeSeedLoop();
  ASSERT_NE(loop.condition, nullptr);
  ASSERT_NE(loop.body, nullptr);
  Builder b("while");
  const Op init = b.Tuple(std::vector<Op>{b.ConstantR0<int32_t>(0), b.ConstantLiteral(Literal(kVector10))});
  const Op result = b.While(*loop.condition, *loop.body, init);
  KILN_ASSERT_OK_AND_ASSIGN(Shape shape, b.GetShape(result));
  EXPECT_EQ(shape, kLoopState);
  EXPECT_TRUE(RunsTo(b, ExpectedLoopResult()));
}

TEST(SeedWhile, InitFromParameters) {
  SeedLoop loop = MakeSeedLoop();
  ASSERT_NE(loop.condition, nullptr);
  ASSERT_NE(loop.body, nullptr);
  Builder b("while");
  const Op init = b.Parameter(0, kLoopState, "init");
  b.While(*loop.condition, *loop.body, init);
  // Starting at 990 with ones: 10 iterations.
  std::vector<float> expected;
  for (float v : OneToTen()) expected.push_back(1 + 10 * v);
  EXPECT_TRUE(RunsTo(
      b, Literal::Tuple({Literal::Scalar<int32_t>(1000), Literal::FromVector<float>(expected)}),
      std::vector<Literal>{Literal::Tuple(
          {Literal::Scalar<int32_t>(990), Literal::FromVector<float>(std::vector<float>(10, 1.0f))})}));
}

TEST(SeedWhile, ConditionFalseAtOnceReturnsInit) {
  SeedLoop loop = MakeSeedLoop();
  ASSERT_NE(loop.condition, nullptr);
  ASSERT_NE(loop.body, nullptr);
  Builder b("while");
  b.While(*loop.condition, *loop.body,
          b.Tuple(std::vector<Op>{b.ConstantR0<int32_t>(5000), b.ConstantR1<float>(OneToTen())}));
  EXPECT_TRUE(
      RunsTo(b, Literal::Tuple({Literal::Scalar<int32_t>(5000), Literal::FromVector<float>(OneToTen())})));
}

TEST(SeedWhile, RefusesBodyThatChangesTheShape) {
  SeedLoop loop = MakeSeedLoop();
  ASSERT_NE(loop.condition, nullptr);
  Builder body("bad_body");
  body.GetTupleElement(body.Parameter(0, kLoopState, "state"), 0);
  KILN_ASSERT_OK_AND_ASSIGN(auto bad_body, body.Build());
  Builder b("while");
  b.While(*loop.condition, *bad_body,
          b.Tuple(std::vector<Op>{b.ConstantR0<int32_t>(0), b.ConstantLiteral(Literal(kVector10))}));
  EXPECT_FALSE(b.first_error().ok());
}

TEST(SeedCall, CallsWithArguments) {
  Builder fn("axpy");
  const Op a = fn.Parameter(0, Shape::Scalar(ElementType::kF32), "a");
  const Op x = fn.Parameter(1, Shape(ElementType::kF32, {3}), "x");
  const Op y = fn.Parameter(2, Shape(ElementType::kF32, {3}), "y");
  fn.Add(fn.Mul(x, a), y);
  KILN_ASSERT_OK_AND_ASSIGN(auto computation, fn.Build());
  Builder b("call");
  b.Call(*computation, std::vector<Op>{b.ConstantR0<float>(2), b.ConstantR1<float>({1, 2, 3}),
                                       b.Parameter(0, Shape(ElementType::kF32, {3}), "y")});
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({12, 24, 36}),
                     std::vector<Literal>{Literal::FromVector<float>({10, 20, 30})}));
}

TEST(SeedCall, CallWithoutArguments) {
  Builder fn("seven");
  fn.ConstantR0<int32_t>(7);
  KILN_ASSERT_OK_AND_ASSIGN(auto computation, fn.Build());
  Builder b("call");
  b.Call(*computation, std::vector<Op>{});
  EXPECT_TRUE(RunsTo(b, Literal::Scalar<int32_t>(7)));
}

TEST(SeedCall, RefusesArityAndTypeMismatch) {
  Builder fn("negate");
  fn.Neg(fn.Parameter(0, Shape::Scalar(ElementType::kF32), "x"));
  KILN_ASSERT_OK_AND_ASSIGN(auto computation, fn.Build());
  {
    Builder b("call");
    b.Call(*computation, std::vector<Op>{});
    EXPECT_FALSE(b.first_error().ok());
  }
  {
    Builder b("call");
    b.Call(*computation, std::vector<Op>{b.ConstantR0<int32_t>(1)});
    EXPECT_FALSE(b.first_error().ok());
  }
}

// true branch: f32 x -> x + 1; false branch: s32 y -> f32(y) * 10.
struct Branches {
  std::unique_ptr<Module> on_true, on_false;
};

Branches MakeBranches() {
  Branches branches;
  Builder t("plus_one");
  t.Add(t.Parameter(0, Shape::Scalar(ElementType::kF32), "x"), t.ConstantR0<float>(1));
  auto built_true = t.Build();
  EXPECT_TRUE(built_true.ok()) << built_true.status().ToString();
  if (built_true.ok()) branches.on_true = std::move(built_true).value();
  Builder f("times_ten");
  f.Mul(f.ConvertElementType(f.Parameter(0, Shape::Scalar(ElementType::kS32), "y"), ElementType::kF32),
        f.ConstantR0<float>(10));
  auto built_false = f.Build();
  EXPECT_TRUE(built_false.ok()) << built_false.status().ToString();
  if (built_false.ok()) branches.on_false = std::move(built_false).value();
  return branches;
}

TEST(SeedConditional, PredicateChoosesTheBranch) {
  Branches branches = MakeBranches();
  ASSERT_NE(branches.on_true, nullptr);
  ASSERT_NE(branches.on_false, nullptr);
  for (bool predicate : {true, false}) {
    Builder b("conditional");
    b.Conditional(b.Parameter(0, Shape::Scalar(ElementType::kPred), "p"), b.ConstantR0<float>(4.5f),
                  *branches.on_true, b.ConstantR0<int32_t>(3), *branches.on_false);
    EXPECT_TRUE(RunsTo(b, Literal::Scalar<float>(predicate ? 5.5f : 30.0f),
                       std::vector<Literal>{Literal::Scalar(predicate)}))
        << predicate;
  }
}

TEST(SeedConditional, BranchIndexOutOfRangeRunsTheLastBranch) {
  std::vector<std::unique_ptr<Module>> modules;
  for (int i = 0; i < 3; ++i) {
    Builder branch("branch");
    branch.Add(branch.Parameter(0, Shape::Scalar(ElementType::kS32), "x"),
               branch.ConstantR0<int32_t>(100 * i));
    auto built = branch.Build();
    ASSERT_TRUE(built.ok()) << built.status().ToString();
    modules.push_back(std::move(built).value());
  }
  const std::vector<const Module*> branches = {modules[0].get(), modules[1].get(), modules[2].get()};
  for (const auto& [index, expected] : std::vector<std::pair<int32_t, int32_t>>{
           {0, 7}, {1, 107}, {2, 207}, {3, 207}, {-1, 207}, {1000, 207}}) {
    Builder b("conditional");
    const Op x = b.ConstantR0<int32_t>(7);
    b.Conditional(b.Parameter(0, Shape::Scalar(ElementType::kS32), "index"), branches,
                  std::vector<Op>{x, x, x});
    EXPECT_TRUE(
        RunsTo(b, Literal::Scalar<int32_t>(expected), std::vector<Literal>{Literal::Scalar<int32_t>(index)}))
        << "branch index " << index;
  }
}

TEST(SeedConditional, RefusesBranchesWithDifferentResults) {
  Branches branches = MakeBranches();
  ASSERT_NE(branches.on_true, nullptr);
  Builder other("to_s32");
  other.Parameter(0, Shape::Scalar(ElementType::kS32), "y");
  KILN_ASSERT_OK_AND_ASSIGN(auto identity, other.Build());
  Builder b("conditional");
  b.Conditional(b.ConstantR0<bool>(true), b.ConstantR0<float>(1), *branches.on_true, b.ConstantR0<int32_t>(3),
                *identity);
  EXPECT_FALSE(b.first_error().ok());
}

TEST(SeedInfeed, ReadsTheFedValue) {
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> backend, CreateBackend("interpreter"));
  const Shape shape(ElementType::kF32, {2, 2});
  Builder b("infeed");
  b.Add(b.Infeed(shape), b.ConstantR0<float>(1));
  KILN_ASSERT_OK_AND_ASSIGN(auto module, b.Build());
  KILN_ASSERT_OK(backend->TransferToInfeed(Literal::FromVector<float>({1, 2, 3, 4}, {2, 2})));
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, kiln::testing::Execute(*backend, *module, {}));
  EXPECT_TRUE(LiteralNear(Literal::FromVector<float>({2, 3, 4, 5}, {2, 2}), result));
}

TEST(SeedInfeed, ConsumesInFifoOrder) {
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> backend, CreateBackend("interpreter"));
  Builder b("infeed");
  b.Infeed(Shape(ElementType::kS32, {3}));
  KILN_ASSERT_OK_AND_ASSIGN(auto module, b.Build());
  KILN_ASSERT_OK(backend->TransferToInfeed(Literal::FromVector<int32_t>({1, 2, 3})));
  KILN_ASSERT_OK(backend->TransferToInfeed(Literal::FromVector<int32_t>({4, 5, 6})));
  KILN_ASSERT_OK_AND_ASSIGN(Literal first, kiln::testing::Execute(*backend, *module, {}));
  KILN_ASSERT_OK_AND_ASSIGN(Literal second, kiln::testing::Execute(*backend, *module, {}));
  EXPECT_EQ(first, Literal::FromVector<int32_t>({1, 2, 3}));
  EXPECT_EQ(second, Literal::FromVector<int32_t>({4, 5, 6}));
}

// The seed's `myfunc`: x = f32[2], y = f32[2x3], out = f32[3x3] with
// z[0][0] = x[1] + y[1][0]; generalised here to z[i][j] = x[r] + y[r][j],
// r = (i + 1) % 2.
void MyFunc(void* out, const void** in) {
  const auto* x = static_cast<const float*>(in[0]);
  const auto* y = static_cast<const float*>(in[1]);
  auto* z = static_cast<float*>(out);
  for (int i = 0; i < 3; ++i) {
    const int r = (i + 1) % 2;
    for (int j = 0; j < 3; ++j) z[i * 3 + j] = x[r] + y[r * 3 + j];
  }
}

TEST(SeedCustomCall, MyFunc) {
  KILN_ASSERT_OK(RegisterCustomCallTarget("myfunc", MyFunc));
  Builder b("custom_call");
  const Op x = b.Parameter(0, Shape(ElementType::kF32, {2}), "x");
  const Op y = b.Parameter(1, Shape(ElementType::kF32, {2, 3}), "y");
  b.CustomCall("myfunc", std::vector<Op>{x, y}, Shape(ElementType::kF32, {3, 3}));
  const std::vector<Literal> args = {Literal::FromVector<float>({1, 2}),
                                     Literal::FromVector<float>({10, 20, 30, 40, 50, 60}, {2, 3})};
  EXPECT_TRUE(RunsTo(b, Literal::FromVector<float>({42, 52, 62, 11, 21, 31, 42, 52, 62}, {3, 3}), args));
}

TEST(SeedCustomCall, RegistrationIsOncePerName) {
  KILN_ASSERT_OK(RegisterCustomCallTarget("myfunc", MyFunc));  // same function again is fine
  EXPECT_EQ(FindCustomCallTarget("myfunc"), MyFunc);
  const Status other = RegisterCustomCallTarget("myfunc", [](void*, const void**) {});
  EXPECT_EQ(other.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(FindCustomCallTarget("seed_test_never_registered"), nullptr);
}

TEST(SeedCustomCall, UnknownTargetIsAnErrorNotACrash) {
  Builder b("custom_call");
  b.CustomCall("seed_test_never_registered", std::vector<Op>{b.ConstantR1<float>({1})},
               Shape(ElementType::kF32, {1}));
  auto result = kiln::testing::BuildAndRun(b);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("seed_test_never_registered"), std::string::npos)
      << result.status().ToString();
}

// --- Random numbers: deterministic for a fixed seed.
StatusOr<Literal> RunWithSeed(const Module& module, uint64_t seed) {
  ExecuteOptions options;
  options.rng_seed = seed;
  return kiln::testing::Run(module, {}, "interpreter", options);
}

double Mean(const Literal& literal) {
  double sum = 0;
  for (int64_t i = 0; i < literal.element_count(); ++i) sum += literal.GetAsDouble(i);
  return sum / static_cast<double>(literal.element_count());
}

double StdDev(const Literal& literal) {
  const double mean = Mean(literal);
  double sum = 0;
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    const double d = literal.GetAsDouble(i) - mean;
    sum += d * d;
  }
  return std::sqrt(sum / static_cast<double>(literal.element_count()));
}

TEST(SeedRngUniform, F32InHalfOpenIntervalAndDeterministic) {
  Builder b("rng_uniform");
  b.RngUniform(b.ConstantR0<float>(2.0f), b.ConstantR0<float>(5.0f), Shape(ElementType::kF32, {1000}));
  KILN_ASSERT_OK_AND_ASSIGN(auto module, b.Build());
  KILN_ASSERT_OK_AND_ASSIGN(Literal first, RunWithSeed(*module, 42));
  KILN_ASSERT_OK_AND_ASSIGN(Literal again, RunWithSeed(*module, 42));
  KILN_ASSERT_OK_AND_ASSIGN(Literal other, RunWithSeed(*module, 43));
  ASSERT_EQ(first.shape(), Shape(ElementType::kF32, {1000}));
  EXPECT_EQ(first, again) << "same seed, same numbers";
  EXPECT_NE(first, other) << "another seed, other numbers";
  for (float v : first.data<float>()) {
    EXPECT_GE(v, 2.0f);
    EXPECT_LT(v, 5.0f);
  }
  // Uniform on [2, 5): mean 3.5, standard deviation 3 / sqrt(12) ~ 0.866.
  EXPECT_NEAR(Mean(first), 3.5, 0.15);
  EXPECT_NEAR(StdDev(first), 0.866, 0.1);
}

TEST(SeedRngUniform, S32CoversTheIntervalAndExcludesB) {
  Builder b("rng_uniform");
  b.RngUniform(b.ConstantR0<int32_t>(-3), b.ConstantR0<int32_t>(7), Shape(ElementType::kS32, {2000}));
  KILN_ASSERT_OK_AND_ASSIGN(auto module, b.Build());
  KILN_ASSERT_OK_AND_ASSIGN(Literal values, RunWithSeed(*module, 7));
  std::set<int32_t> seen;
  for (int32_t v : values.data<int32_t>()) {
    EXPECT_GE(v, -3);
    EXPECT_LT(v, 7);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 10u) << "every value of [-3, 7) should appear in 2000 draws";
}

TEST(SeedRngUniform, RefusesMismatchedTypes) {
  Builder b("rng_uniform");
  b.RngUniform(b.ConstantR0<float>(0), b.ConstantR0<int32_t>(1), Shape(ElementType::kF32, {4}));
  EXPECT_FALSE(b.first_error().ok());
}

TEST(SeedRngNormal, MeanAndStandardDeviation) {
  Builder b("rng_normal");
  b.RngNormal(b.ConstantR0<float>(1.0f), b.ConstantR0<float>(2.0f), Shape(ElementType::kF32, {100, 100}));
  KILN_ASSERT_OK_AND_ASSIGN(auto module, b.Build());
  KILN_ASSERT_OK_AND_ASSIGN(Literal first, RunWithSeed(*module, 1234));
  KILN_ASSERT_OK_AND_ASSIGN(Literal again, RunWithSeed(*module, 1234));
  EXPECT_EQ(first, again);
  ASSERT_EQ(first.element_count(), 10000);
  // Standard error of the mean is 0.02; these bounds are > 5 sigma.
  EXPECT_NEAR(Mean(first), 1.0, 0.1);
  EXPECT_NEAR(StdDev(first), 2.0, 0.1);
  int64_t within_one_sigma = 0;
  for (float v : first.data<float>()) {
    EXPECT_TRUE(std::isfinite(v));
    if (std::fabs(v - 1.0f) < 2.0f) ++within_one_sigma;
  }
  EXPECT_NEAR(static_cast<double>(within_one_sigma) / 10000.0, 0.6827, 0.03);
}

TEST(SeedRngBernoulli, ZerosAndOnesWithTheGivenMean) {
  Builder b("rng_bernoulli");
  b.RngBernoulli(b.ConstantR0<float>(0.25f), Shape(ElementType::kU32, {4000}));
  KILN_ASSERT_OK_AND_ASSIGN(auto module, b.Build());
  KILN_ASSERT_OK_AND_ASSIGN(Literal first, RunWithSeed(*module, 99));
  KILN_ASSERT_OK_AND_ASSIGN(Literal again, RunWithSeed(*module, 99));
  EXPECT_EQ(first, again);
  for (uint32_t v : first.data<uint32_t>()) EXPECT_TRUE(v == 0 || v == 1) << v;
  EXPECT_NEAR(Mean(first), 0.25, 0.04);
}

}  // namespace
}  // namespace kiln
