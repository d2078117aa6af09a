// The VJP module's contract (parameters, results, errors), the rule table's
// coverage of the differentiable ops, a small MLP's loss against its
// hand-derived gradient, and second derivatives (grad of grad).
#include <cmath>
#include <random>

#include "core/autodiff/vjp_rules.h"
#include "core/hlo_parser.h"
#include "tests/unit/autodiff_gradient_check.h"

namespace kiln {
namespace {

using testing::ExpectGradientsMatchFiniteDifferences;
using testing::RandomF64;

using testing::F64;

StatusOr<std::unique_ptr<Module>> Vjp(const Module& module, std::vector<int64_t> wrt) {
  return autodiff::BuildVjp(module, wrt);
}

TEST(AutodiffVjpTest, EveryDifferentiableOpHasARuleOrIsListedAsNotYet) {
  for (int i = 0; i < static_cast<int>(Opcode::kOpcodeCount); ++i) {
    const auto opcode = static_cast<Opcode>(i);
    const autodiff::RuleLookup lookup = autodiff::FindVjpRule(opcode);
    Instruction instruction;
    instruction.opcode = opcode;
    instruction.name = "op.7";
    if (opcode == Opcode::kCustomCall) {
      // The one exception: its rule differentiates registered ops with a
      // gradient function and refuses every other target.
      EXPECT_EQ(lookup.state, autodiff::RuleState::kRule);
      continue;
    }
    if (!IsDifferentiable(opcode)) {
      EXPECT_EQ(lookup.state, autodiff::RuleState::kNotDifferentiable) << OpcodeName(opcode);
      const Status error = autodiff::NoRuleError(instruction, lookup.state);
      EXPECT_EQ(error.code(), StatusCode::kInvalidArgument);
      EXPECT_NE(error.message().find("'" + std::string(OpcodeName(opcode)) + "' is not differentiable"),
                std::string::npos);
      continue;
    }
    EXPECT_NE(lookup.state, autodiff::RuleState::kNotDifferentiable)
        << OpcodeName(opcode) << " has the kDifferentiable trait but is missing from the rule table";
    if (lookup.state == autodiff::RuleState::kRule) {
      EXPECT_NE(lookup.rule, nullptr);
      continue;
    }
    const Status error = autodiff::NoRuleError(instruction, lookup.state);
    EXPECT_EQ(error.code(), StatusCode::kUnimplemented);
    EXPECT_NE(error.message().find("no derivative rule yet for '" + std::string(OpcodeName(opcode)) + "'"),
              std::string::npos)
        << error.message();
    EXPECT_NE(error.message().find("op.7"), std::string::npos);
  }
}

// Parameters: the originals, then one cotangent per result leaf; results:
// the original leaves, then one gradient per wrt entry.
TEST(AutodiffVjpTest, ModuleContract) {
  Builder builder("f");
  Op x = builder.Parameter(0, F64({3}), "x");
  Op n = builder.Parameter(1, Shape::Scalar(ElementType::kS32), "n");
  Op y = builder.Parameter(2, F64({2}), "y");
  builder.Tuple(std::vector<Op>{builder.Tuple(std::vector<Op>{builder.Sin(x), n}), builder.Exp(y)});
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  KILN_ASSERT_OK_AND_ASSIGN(auto vjp, Vjp(*module, {2, 0}));
  const ProgramShape signature = vjp->entry()->program_shape();
  ASSERT_EQ(signature.parameters.size(), 6u);
  EXPECT_EQ(signature.parameters[3].ToString(), "f64[3]");
  EXPECT_EQ(signature.parameters[4].ToString(), "s32[]");
  EXPECT_EQ(signature.parameters[5].ToString(), "f64[2]");
  EXPECT_EQ(signature.result.ToString(), "(f64[3], s32[], f64[2], f64[2], f64[3])");
  // The text form parses back (what `kiln grad` writes).
  KILN_ASSERT_OK_AND_ASSIGN(auto reparsed, ParseHloModule(vjp->ToString()));
  EXPECT_EQ(reparsed->entry()->program_shape().result.ToString(), signature.result.ToString());

  const Literal inputs[] = {Literal::FromVector<double>({0.1, 0.2, 0.3}),
                            Literal::Scalar<int32_t>(4),
                            Literal::FromVector<double>({1.0, 2.0}),
                            Literal::FromVector<double>({1, 1, 1}),
                            Literal::Scalar<int32_t>(9),
                            Literal::FromVector<double>({2.0, 3.0})};
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Run(*vjp, inputs));
  ASSERT_EQ(result.tuple_elements().size(), 5u);
  EXPECT_EQ(result.tuple_elements()[1], Literal::Scalar<int32_t>(4));
  EXPECT_NEAR(result.tuple_elements()[3].GetAsDouble(1), 3.0 * std::exp(2.0), 1e-12);
  EXPECT_NEAR(result.tuple_elements()[4].GetAsDouble(2), std::cos(0.3), 1e-12);
}

TEST(AutodiffVjpTest, ScalarLossTakesNoCotangentAndUnusedParametersGetZero) {
  Builder builder("loss");
  Op x = builder.Parameter(0, F64({2}), "x");
  builder.Parameter(1, F64({2}), "unused");
  KILN_ASSERT_OK_AND_ASSIGN(auto add,
                            testing::ScalarBinaryComputation(Opcode::kAdd, ElementType::kF64, "add"));
  const int64_t dims[] = {0};
  builder.Reduce(builder.Mul(x, x), builder.ConstantR0<double>(0.0), *add, dims);
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  KILN_ASSERT_OK_AND_ASSIGN(auto vjp, Vjp(*module, {0, 1}));
  EXPECT_EQ(vjp->entry()->parameters().size(), 2u);
  const Literal inputs[] = {Literal::FromVector<double>({1.5, -2.0}), Literal::FromVector<double>({7, 7})};
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Run(*vjp, inputs));
  EXPECT_EQ(result.tuple_elements()[0], Literal::Scalar<double>(6.25));
  EXPECT_EQ(result.tuple_elements()[1], Literal::FromVector<double>({3.0, -4.0}));
  EXPECT_EQ(result.tuple_elements()[2], Literal::FromVector<double>({0.0, 0.0}));
}

TEST(AutodiffVjpTest, BadRequestsAreRefusedByName) {
  Builder builder("f");
  Op x = builder.Parameter(0, F64({4}), "x");
  Op count = builder.Parameter(1, Shape(ElementType::kS32, {4}), "count");
  builder.Add(x, builder.ConvertElementType(count, ElementType::kF64));
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  for (int64_t bad : {2, -1}) {
    const auto result = Vjp(*module, {bad});
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(result.status().message().find("parameter " + std::to_string(bad)), std::string::npos);
    EXPECT_NE(result.status().message().find("has 2 parameters"), std::string::npos)
        << result.status().message();
  }
  const auto integer = Vjp(*module, {1});
  ASSERT_FALSE(integer.ok());
  EXPECT_EQ(integer.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(integer.status().message().find("'count', s32[4]"), std::string::npos)
      << integer.status().message();
}

TEST(AutodiffVjpTest, OpsWithoutRulesAreNamedOnlyWhenTheGradientGoesThroughThem) {
  Builder builder("f");
  Op x = builder.Parameter(0, F64({4}), "x");
  Op y = builder.Parameter(1, F64({4}), "y");
  // A select-and-scatter with a max scatter has no rule (nor has it in JAX).
  KILN_ASSERT_OK_AND_ASSIGN(auto max,
                            testing::ScalarBinaryComputation(Opcode::kMaximum, ElementType::kF64, "max"));
  Builder ge("ge");
  ge.Compare(ge.Parameter(0, Shape::Scalar(ElementType::kF64), "a"),
             ge.Parameter(1, Shape::Scalar(ElementType::kF64), "b"), ComparisonDirection::kGe);
  KILN_ASSERT_OK_AND_ASSIGN(auto select, ge.Build());
  const int64_t one[] = {1};
  const std::pair<int64_t, int64_t> no_padding[] = {{0, 0}};
  builder.Add(builder.SelectAndScatterWithGeneralPadding(x, *select, one, one, no_padding, x,
                                                         builder.ConstantR0<double>(0.0), *max),
              builder.CustomCall("my_target", std::vector<Op>{y}, F64({4})));
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  const auto not_yet = Vjp(*module, {0});
  ASSERT_FALSE(not_yet.ok());
  EXPECT_EQ(not_yet.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(not_yet.status().message().find("'select-and-scatter'"), std::string::npos)
      << not_yet.status().message();
  const auto opaque = Vjp(*module, {1});
  ASSERT_FALSE(opaque.ok());
  EXPECT_EQ(opaque.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(opaque.status().message().find("'custom-call' is not differentiable"), std::string::npos)
      << opaque.status().message();
  // With respect to nothing that reaches them, neither is in the way.
  Builder other("g");
  Op a = other.Parameter(0, F64({4}), "a");
  Op b = other.Parameter(1, F64({4}), "b");
  other.Mul(other.SelectAndScatterWithGeneralPadding(b, *select, one, one, no_padding, b,
                                                     other.ConstantR0<double>(0.0), *max),
            a);
  KILN_ASSERT_OK_AND_ASSIGN(auto partial, other.Build());
  KILN_ASSERT_OK(Vjp(*partial, {0}).status());
}

// Gradients keep their parameter's element type, whatever float it is.
TEST(AutodiffVjpTest, GradientsOfNarrowFloatsKeepTheirType) {
  for (ElementType type : {ElementType::kF32, ElementType::kF16, ElementType::kBF16}) {
    SCOPED_TRACE(std::string(ElementTypeName(type)));
    const Shape shape(type, {3});
    Builder builder("narrow");
    Op x = builder.Parameter(0, shape, "x");
    KILN_ASSERT_OK_AND_ASSIGN(auto add, testing::ScalarBinaryComputation(Opcode::kAdd, type, "add"));
    const int64_t dims[] = {0};
    Op three = builder.ConvertElementType(builder.ConstantR0<float>(3.0f), type);
    builder.Reduce(builder.Mul(builder.Mul(x, x), builder.BroadcastInDim(three, shape.dimensions(), {})),
                   builder.ConvertElementType(builder.ConstantR0<float>(0.0f), type), *add, dims);
    KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
    KILN_ASSERT_OK_AND_ASSIGN(auto vjp, Vjp(*module, {0}));
    KILN_ASSERT_OK_AND_ASSIGN(Literal input, Literal::FromVector<float>({1, 2, -3}).Convert(type));
    const Literal inputs[] = {input};
    for (const char* backend : {"interpreter", "cpu"}) {
      KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Run(*vjp, inputs, backend));
      const Literal& gradient = result.tuple_elements()[1];
      EXPECT_EQ(gradient.shape().element_type(), type) << backend;
      EXPECT_EQ(gradient.GetAsDouble(0), 6.0) << backend;
      EXPECT_EQ(gradient.GetAsDouble(1), 12.0) << backend;
      EXPECT_EQ(gradient.GetAsDouble(2), -18.0) << backend;
    }
  }
}

// JAX wraps functions in calls; they are inlined before differentiation.
TEST(AutodiffVjpTest, CallsAreDifferentiatedThrough) {
  std::mt19937 random(24);
  Builder callee_builder("callee");
  Op y = callee_builder.Parameter(0, F64({4}), "y");
  Op z = callee_builder.Parameter(1, F64({4}), "z");
  callee_builder.Mul(y, callee_builder.Sin(z));
  KILN_ASSERT_OK_AND_ASSIGN(auto callee, callee_builder.Build());
  Builder builder("caller");
  Op x = builder.Parameter(0, F64({4}), "x");
  Op w = builder.Parameter(1, F64({4}), "w");
  const Op arguments[] = {builder.Exp(x), w};
  builder.Call(*callee, arguments);
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  ExpectGradientsMatchFiniteDifferences(*module, {0, 1},
                                        {RandomF64(F64({4}), random), RandomF64(F64({4}), random)});
}

// JAX's with_sharding_constraint leaves a custom call that is its operand
// on one device: the gradient passes through it.
TEST(AutodiffVjpTest, ShardingAnnotationsPassTheGradientThrough) {
  std::mt19937 random(23);
  Builder builder("sharded");
  Op x = builder.Parameter(0, F64({2, 3}), "x");
  builder.Sin(builder.CustomCall("Sharding", std::vector<Op>{builder.Mul(x, x)}, F64({2, 3})));
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  ExpectGradientsMatchFiniteDifferences(*module, {0}, {RandomF64(F64({2, 3}), random)});
}

// loss = sum((tanh(x W + b) v - t)^2), against the gradient derived by hand.
TEST(AutodiffVjpTest, SmallMlpLossMatchesTheHandDerivedGradient) {
  constexpr int64_t kBatch = 4, kIn = 3, kHidden = 5;
  std::mt19937 random(21);
  const Literal x = RandomF64(F64({kBatch, kIn}), random);
  const Literal w = RandomF64(F64({kIn, kHidden}), random, -1, 1);
  const Literal bias = RandomF64(F64({kHidden}), random, -1, 1);
  const Literal v = RandomF64(F64({kHidden}), random, -1, 1);
  const Literal t = RandomF64(F64({kBatch}), random);

  Builder builder("mlp");
  Op px = builder.Parameter(0, x.shape(), "x");
  Op pw = builder.Parameter(1, w.shape(), "w");
  Op pb = builder.Parameter(2, bias.shape(), "b");
  Op pv = builder.Parameter(3, v.shape(), "v");
  Op pt = builder.Parameter(4, t.shape(), "t");
  const int64_t hidden_dims[] = {kBatch, kHidden};
  const int64_t bias_dims[] = {1};
  Op h = builder.Tanh(builder.Add(builder.Dot(px, pw), builder.BroadcastInDim(pb, hidden_dims, bias_dims)));
  Op r = builder.Sub(builder.Dot(h, pv), pt);
  KILN_ASSERT_OK_AND_ASSIGN(auto add,
                            testing::ScalarBinaryComputation(Opcode::kAdd, ElementType::kF64, "add"));
  const int64_t dims[] = {0};
  builder.Reduce(builder.Mul(r, r), builder.ConstantR0<double>(0.0), *add, dims);
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  KILN_ASSERT_OK_AND_ASSIGN(auto vjp, Vjp(*module, {1, 2, 3, 0}));

  // By hand: z = xW + b, h = tanh z, r = hv - t; dL/dr = 2r,
  // dv = h^T 2r, dz = (2r v^T) (1 - h^2), dW = x^T dz, db = sum dz, dx = dz W^T.
  std::vector<double> hv(kBatch * kHidden), dr(kBatch), dz(kBatch * kHidden);
  double loss = 0;
  for (int64_t i = 0; i < kBatch; ++i) {
    double out = 0;
    for (int64_t j = 0; j < kHidden; ++j) {
      double z = bias.data<double>()[j];
      for (int64_t k = 0; k < kIn; ++k)
        z += x.data<double>()[i * kIn + k] * w.data<double>()[k * kHidden + j];
      hv[i * kHidden + j] = std::tanh(z);
      out += hv[i * kHidden + j] * v.data<double>()[j];
    }
    dr[i] = 2 * (out - t.data<double>()[i]);
    loss += (out - t.data<double>()[i]) * (out - t.data<double>()[i]);
    for (int64_t j = 0; j < kHidden; ++j) {
      dz[i * kHidden + j] = dr[i] * v.data<double>()[j] * (1 - hv[i * kHidden + j] * hv[i * kHidden + j]);
    }
  }
  std::vector<double> dw(kIn * kHidden, 0), db(kHidden, 0), dv(kHidden, 0), dx(kBatch * kIn, 0);
  for (int64_t i = 0; i < kBatch; ++i) {
    for (int64_t j = 0; j < kHidden; ++j) {
      db[j] += dz[i * kHidden + j];
      dv[j] += hv[i * kHidden + j] * dr[i];
      for (int64_t k = 0; k < kIn; ++k) {
        dw[k * kHidden + j] += x.data<double>()[i * kIn + k] * dz[i * kHidden + j];
        dx[i * kIn + k] += dz[i * kHidden + j] * w.data<double>()[k * kHidden + j];
      }
    }
  }
  const Literal inputs[] = {x, w, bias, v, t};
  for (const char* backend : {"interpreter", "cpu"}) {
    SCOPED_TRACE(backend);
    KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Run(*vjp, inputs, backend));
    const auto& out = result.tuple_elements();
    ASSERT_EQ(out.size(), 5u);
    EXPECT_NEAR(out[0].GetAsDouble(0), loss, 1e-12 * (1 + loss));
    const std::vector<double>* expected[] = {&dw, &db, &dv, &dx};
    for (size_t g = 0; g < 4; ++g) {
      ASSERT_EQ(out[g + 1].element_count(), static_cast<int64_t>(expected[g]->size()));
      for (size_t i = 0; i < expected[g]->size(); ++i) {
        EXPECT_NEAR(out[g + 1].GetAsDouble(static_cast<int64_t>(i)), (*expected[g])[i], 1e-12)
            << "gradient " << g << " element " << i;
      }
    }
  }
}

// The gradient module is an ordinary module: differentiating it again gives
// second derivatives.
TEST(AutodiffVjpTest, GradOfGradOfCube) {
  Builder builder("cube");
  Op x = builder.Parameter(0, Shape::Scalar(ElementType::kF64), "x");
  builder.Mul(builder.Mul(x, x), x);
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  KILN_ASSERT_OK_AND_ASSIGN(auto first, Vjp(*module, {0}));
  KILN_ASSERT_OK_AND_ASSIGN(auto second, Vjp(*first, {0}));
  // Parameters: x, then the cotangents of (x^3, 3x^2): (0, 1) picks the second derivative.
  ASSERT_EQ(second->entry()->parameters().size(), 3u);
  for (double value : {-1.5, 0.0, 2.0}) {
    const Literal inputs[] = {Literal::Scalar<double>(value), Literal::Scalar<double>(0.0),
                              Literal::Scalar<double>(1.0)};
    for (const char* backend : {"interpreter", "cpu"}) {
      KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Run(*second, inputs, backend));
      ASSERT_EQ(result.tuple_elements().size(), 3u);
      EXPECT_DOUBLE_EQ(result.tuple_elements()[1].GetAsDouble(0), 3 * value * value) << backend;
      EXPECT_DOUBLE_EQ(result.tuple_elements()[2].GetAsDouble(0), 6 * value) << backend;
    }
  }
}

TEST(AutodiffVjpTest, GradOfGradThroughDotAndTanhMatchesFiniteDifferences) {
  std::mt19937 random(22);
  Builder builder("dot_loss");
  Op x = builder.Parameter(0, F64({3, 4}), "x");
  Op w = builder.Parameter(1, F64({4, 2}), "w");
  KILN_ASSERT_OK_AND_ASSIGN(auto add,
                            testing::ScalarBinaryComputation(Opcode::kAdd, ElementType::kF64, "add"));
  const int64_t dims[] = {0, 1};
  builder.Reduce(builder.Tanh(builder.Dot(x, w)), builder.ConstantR0<double>(0.0), *add, dims);
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  KILN_ASSERT_OK_AND_ASSIGN(auto first, Vjp(*module, {1, 0}));
  // Second order: the first gradient module checked like any other.
  ExpectGradientsMatchFiniteDifferences(
      *first, {0, 1}, {RandomF64(F64({3, 4}), random, -1, 1), RandomF64(F64({4, 2}), random, -1, 1)});
}

}  // namespace
}  // namespace kiln
