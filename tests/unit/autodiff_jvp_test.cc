// Forward mode (core/autodiff/jvp.h): the rule table's coverage of the
// differentiable ops, the module's contract, errors that name what is
// wrong, and per op family the tangents against f64 central differences
// and against reverse mode (<w, J v> == <J^T w, v>) on random shapes, on
// the interpreter and cpu (tests/unit/autodiff_jvp_check.h).
#include <cmath>
#include <random>
#include <string>

#include "core/autodiff/jvp_rules.h"
#include "core/hlo_parser.h"
#include "tests/unit/autodiff_jvp_check.h"

namespace kiln {
namespace {

using testing::ExpectJvpMatches;
using testing::RandomF64;
using testing::RandomF64Shape;

using testing::BuildModule;
using testing::F64;

// Checks `body` over parameters of `shapes`, each f64 one differentiated,
// at inputs uniform in [low, high).
void Check(const std::vector<Shape>& shapes, auto body, uint32_t seed, double low = -2.0, double high = 2.0) {
  std::mt19937 random(seed);
  auto module = BuildModule(shapes, body);
  ASSERT_NE(module, nullptr);
  std::vector<Literal> inputs;
  std::vector<int64_t> wrt;
  for (size_t i = 0; i < shapes.size(); ++i) {
    inputs.push_back(RandomF64(shapes[i], random, low, high));
    wrt.push_back(static_cast<int64_t>(i));
  }
  ExpectJvpMatches(*module, wrt, std::move(inputs), seed);
}

std::unique_ptr<Module> Scalar(Opcode opcode, const std::string& name) {
  auto computation = testing::ScalarBinaryComputation(opcode, ElementType::kF64, name);
  EXPECT_TRUE(computation.ok());
  return computation.ok() ? std::move(computation).value() : nullptr;
}

TEST(AutodiffJvpTest, EveryDifferentiableOpHasARuleOrIsListedAsNotYet) {
  for (int i = 0; i < static_cast<int>(Opcode::kOpcodeCount); ++i) {
    const auto opcode = static_cast<Opcode>(i);
    const autodiff::JvpRuleLookup lookup = autodiff::FindJvpRule(opcode);
    Instruction instruction;
    instruction.opcode = opcode;
    instruction.name = "op.7";
    if (opcode == Opcode::kCustomCall) {
      // The one exception: its rule refuses every target (naming it) but the
      // partitioner's identity annotations.
      EXPECT_EQ(lookup.state, autodiff::RuleState::kRule);
      continue;
    }
    if (!IsDifferentiable(opcode)) {
      EXPECT_EQ(lookup.state, autodiff::RuleState::kNotDifferentiable) << OpcodeName(opcode);
      const Status error = autodiff::JvpNoRuleError(instruction, lookup.state);
      EXPECT_EQ(error.code(), StatusCode::kInvalidArgument);
      EXPECT_NE(error.message().find("'" + std::string(OpcodeName(opcode)) + "' is not differentiable"),
                std::string::npos);
      continue;
    }
    EXPECT_NE(lookup.state, autodiff::RuleState::kNotDifferentiable)
        << OpcodeName(opcode) << " has the kDifferentiable trait but is missing from the JVP rule table";
    if (lookup.state == autodiff::RuleState::kRule) {
      EXPECT_NE(lookup.rule, nullptr);
      continue;
    }
    const Status error = autodiff::JvpNoRuleError(instruction, lookup.state);
    EXPECT_EQ(error.code(), StatusCode::kUnimplemented);
    EXPECT_NE(error.message().find("no forward-mode rule yet for '" + std::string(OpcodeName(opcode)) + "'"),
              std::string::npos)
        << error.message();
    EXPECT_NE(error.message().find("op.7"), std::string::npos);
  }
}

// Parameters: the originals, then one tangent per wrt entry; results: the
// original leaves, then one tangent per leaf (zeros for an integer leaf).
TEST(AutodiffJvpTest, ModuleContract) {
  Builder builder("f");
  Op x = builder.Parameter(0, F64({3}), "x");
  Op n = builder.Parameter(1, Shape::Scalar(ElementType::kS32), "n");
  Op y = builder.Parameter(2, F64({2}), "y");
  builder.Tuple(std::vector<Op>{builder.Tuple(std::vector<Op>{builder.Sin(x), n}), builder.Exp(y)});
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  KILN_ASSERT_OK_AND_ASSIGN(auto jvp, autodiff::BuildJvp(*module, std::vector<int64_t>{2, 0}));
  const ProgramShape signature = jvp->entry()->program_shape();
  ASSERT_EQ(signature.parameters.size(), 5u);
  EXPECT_EQ(signature.parameters[3].ToString(), "f64[2]");
  EXPECT_EQ(signature.parameters[4].ToString(), "f64[3]");
  EXPECT_EQ(signature.result.ToString(), "(f64[3], s32[], f64[2], f64[3], s32[], f64[2])");
  KILN_ASSERT_OK_AND_ASSIGN(auto reparsed, ParseHloModule(jvp->ToString()));
  EXPECT_EQ(reparsed->entry()->program_shape().result.ToString(), signature.result.ToString());

  const Literal inputs[] = {Literal::FromVector<double>({0.1, 0.2, 0.3}), Literal::Scalar<int32_t>(4),
                            Literal::FromVector<double>({1.0, 2.0}), Literal::FromVector<double>({2.0, 3.0}),
                            Literal::FromVector<double>({1, -1, 0.5})};
  for (const char* backend : {"interpreter", "cpu"}) {
    SCOPED_TRACE(backend);
    KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Run(*jvp, inputs, backend));
    ASSERT_EQ(result.tuple_elements().size(), 6u);
    EXPECT_EQ(result.tuple_elements()[1], Literal::Scalar<int32_t>(4));
    EXPECT_EQ(result.tuple_elements()[4], Literal::Scalar<int32_t>(0));
    EXPECT_NEAR(result.tuple_elements()[3].GetAsDouble(1), -std::cos(0.2), 1e-12);
    EXPECT_NEAR(result.tuple_elements()[3].GetAsDouble(2), 0.5 * std::cos(0.3), 1e-12);
    EXPECT_NEAR(result.tuple_elements()[5].GetAsDouble(1), 3.0 * std::exp(2.0), 1e-12);
  }
}

TEST(AutodiffJvpTest, BadRequestsAreRefusedByName) {
  Builder builder("f");
  Op x = builder.Parameter(0, F64({4}), "x");
  Op count = builder.Parameter(1, Shape(ElementType::kS32, {4}), "count");
  builder.Add(x, builder.ConvertElementType(count, ElementType::kF64));
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  for (int64_t bad : {2, -1}) {
    const auto result = autodiff::BuildJvp(*module, std::vector<int64_t>{bad});
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(result.status().message().find("parameter " + std::to_string(bad)), std::string::npos);
    EXPECT_NE(result.status().message().find("has 2 parameters"), std::string::npos)
        << result.status().message();
  }
  const auto integer = autodiff::BuildJvp(*module, std::vector<int64_t>{1});
  ASSERT_FALSE(integer.ok());
  EXPECT_EQ(integer.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(integer.status().message().find("'count', s32[4]"), std::string::npos)
      << integer.status().message();
  const auto twice = autodiff::BuildJvp(*module, std::vector<int64_t>{0, 0});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(twice.status().message().find("wrt[1] repeats parameter 0"), std::string::npos)
      << twice.status().message();
}

// A select-and-scatter with a max scatter has no rule (UNIMPLEMENTED, as in
// JAX), an opaque custom
// call no derivative (INVALID_ARGUMENT); each is named only when a tangent
// goes through it.
TEST(AutodiffJvpTest, OpsWithoutRulesAreNamedOnlyWhenTheTangentGoesThroughThem) {
  Builder builder("f");
  Op x = builder.Parameter(0, F64({4}), "x");
  Op y = builder.Parameter(1, F64({4}), "y");
  Op z = builder.Parameter(2, F64({4}), "z");
  auto max = Scalar(Opcode::kMaximum, "max");
  Builder ge("ge");
  ge.Compare(ge.Parameter(0, Shape::Scalar(ElementType::kF64), "a"),
             ge.Parameter(1, Shape::Scalar(ElementType::kF64), "b"), ComparisonDirection::kGe);
  KILN_ASSERT_OK_AND_ASSIGN(auto select, ge.Build());
  const int64_t one[] = {1};
  const std::pair<int64_t, int64_t> no_padding[] = {{0, 0}};
  builder.Tuple(
      std::vector<Op>{builder.SelectAndScatterWithGeneralPadding(x, *select, one, one, no_padding, x,
                                                                 builder.ConstantR0<double>(0.0), *max),
                      builder.CustomCall("my_target", std::vector<Op>{y}, F64({4})), builder.Sin(z)});
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  const auto not_yet = autodiff::BuildJvp(*module, std::vector<int64_t>{0});
  ASSERT_FALSE(not_yet.ok());
  EXPECT_EQ(not_yet.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(not_yet.status().message().find("'select-and-scatter'"), std::string::npos)
      << not_yet.status().message();
  const auto opaque = autodiff::BuildJvp(*module, std::vector<int64_t>{1});
  ASSERT_FALSE(opaque.ok());
  EXPECT_EQ(opaque.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(opaque.status().message().find("'custom-call' is not differentiable"), std::string::npos)
      << opaque.status().message();
  KILN_ASSERT_OK(autodiff::BuildJvp(*module, std::vector<int64_t>{2}).status());
}

TEST(AutodiffJvpTest, UnaryOps) {
  std::mt19937 random(1);
  // Ops defined everywhere, then those that want positive inputs.
  const Opcode anywhere[] = {Opcode::kSin,      Opcode::kCos,   Opcode::kTanh,   Opcode::kExp, Opcode::kErf,
                             Opcode::kLogistic, Opcode::kExpm1, Opcode::kNegate, Opcode::kAbs, Opcode::kTan};
  const Opcode positive[] = {Opcode::kLog, Opcode::kLog1p, Opcode::kSqrt, Opcode::kRsqrt, Opcode::kCbrt};
  for (Opcode opcode : anywhere) {
    SCOPED_TRACE(std::string(OpcodeName(opcode)));
    Check(
        {RandomF64Shape(random)},
        [&](Builder& b, std::vector<Op>& p) {
          // tan stays away from its poles: tan(x / 2) on (-1, 1).
          return b.UnaryOp(opcode, opcode == Opcode::kTan ? b.Mul(p[0], b.ConstantR0<double>(0.5)) : p[0]);
        },
        static_cast<uint32_t>(opcode));
  }
  for (Opcode opcode : positive) {
    SCOPED_TRACE(std::string(OpcodeName(opcode)));
    Check(
        {RandomF64Shape(random)}, [&](Builder& b, std::vector<Op>& p) { return b.UnaryOp(opcode, p[0]); },
        static_cast<uint32_t>(opcode), 0.5, 2.0);
  }
}

// Piecewise-constant ops give zero tangents; an integer detour stops them.
TEST(AutodiffJvpTest, PiecewiseConstantOpsAndIntegersGiveZero) {
  Check(
      {F64({3, 2})},
      [](Builder& b, std::vector<Op>& p) {
        Op steps = b.Add(b.Add(b.Floor(p[0]), b.Ceil(p[0])), b.Add(b.Sign(p[0]), b.Round(p[0])));
        Op through_int =
            b.ConvertElementType(b.ConvertElementType(p[0], ElementType::kS32), ElementType::kF64);
        return b.Add(b.Mul(steps, p[0]), through_int);
      },
      2);
}

TEST(AutodiffJvpTest, BinaryOps) {
  std::mt19937 random(3);
  const Opcode ops[] = {Opcode::kAdd,     Opcode::kSubtract, Opcode::kMultiply,
                        Opcode::kDivide,  Opcode::kAtan2,    Opcode::kMaximum,
                        Opcode::kMinimum, Opcode::kPower,    Opcode::kRemainder};
  for (Opcode opcode : ops) {
    SCOPED_TRACE(std::string(OpcodeName(opcode)));
    const Shape shape = RandomF64Shape(random);
    // Positive operands keep power real and divide and remainder away from 0.
    Check(
        {shape, shape}, [&](Builder& b, std::vector<Op>& p) { return b.BinaryOp(opcode, p[0], p[1]); },
        static_cast<uint32_t>(opcode), 0.5, 2.0);
  }
}

// Ties of maximum share the tangents equally (JAX's rule), in both modes.
TEST(AutodiffJvpTest, MaximumTiesAndMaxReduceTiesShareTheTangent) {
  Builder builder("ties");
  Op x = builder.Parameter(0, F64({3}), "x");
  Op y = builder.Parameter(1, F64({3}), "y");
  auto max = Scalar(Opcode::kMaximum, "max");
  const int64_t all[] = {0};
  builder.Tuple(
      std::vector<Op>{builder.Max(x, y), builder.Reduce(x, builder.ConstantR0<double>(-10), *max, all)});
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  KILN_ASSERT_OK_AND_ASSIGN(auto jvp, autodiff::BuildJvp(*module, std::vector<int64_t>{0, 1}));
  const Literal inputs[] = {Literal::FromVector<double>({1, 2, 2}), Literal::FromVector<double>({1, 0, 5}),
                            Literal::FromVector<double>({2, 4, 8}), Literal::FromVector<double>({6, 1, 1})};
  for (const char* backend : {"interpreter", "cpu"}) {
    SCOPED_TRACE(backend);
    KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Run(*jvp, inputs, backend));
    EXPECT_EQ(result.tuple_elements()[2], Literal::FromVector<double>({4, 4, 1}));
    EXPECT_EQ(result.tuple_elements()[3], Literal::Scalar<double>(6));  // (4 + 8) / 2
  }
}

TEST(AutodiffJvpTest, SelectAndClamp) {
  std::mt19937 random(4);
  for (int trial = 0; trial < 3; ++trial) {
    const Shape shape = RandomF64Shape(random);
    Check(
        {shape, shape, shape},
        [](Builder& b, std::vector<Op>& p) {
          Op picked = b.Select(b.Gt(p[0], p[1]), b.Sin(p[0]), b.Mul(p[1], p[2]));
          return b.Add(picked, b.Clamp(b.Neg(b.Abs(p[1])), p[0], b.Abs(p[2])));
        },
        static_cast<uint32_t>(10 + trial));
    Check(
        {Shape::Scalar(ElementType::kF64), shape, Shape::Scalar(ElementType::kF64)},
        [](Builder& b, std::vector<Op>& p) {
          return b.Clamp(p[0], p[1], b.Add(p[2], b.ConstantR0<double>(1.5)));
        },
        static_cast<uint32_t>(20 + trial), -1.0, 1.0);
  }
}

TEST(AutodiffJvpTest, ConvertBetweenFloatsCarriesTheTangent) {
  Builder builder("narrow");
  Op x = builder.Parameter(0, F64({3}), "x");
  builder.Mul(builder.ConvertElementType(x, ElementType::kF32),
              builder.ConvertElementType(x, ElementType::kF32));
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  KILN_ASSERT_OK_AND_ASSIGN(auto jvp, autodiff::BuildJvp(*module, std::vector<int64_t>{0}));
  const Literal inputs[] = {Literal::FromVector<double>({1, -2, 3}),
                            Literal::FromVector<double>({1, 1, 0.5})};
  for (const char* backend : {"interpreter", "cpu"}) {
    KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Run(*jvp, inputs, backend));
    EXPECT_EQ(result.tuple_elements()[1], Literal::FromVector<float>({2, -4, 3})) << backend;
  }
}

TEST(AutodiffJvpTest, ShapeOps) {
  std::mt19937 random(5);
  for (int trial = 0; trial < 3; ++trial) {
    const Shape shape = RandomF64Shape(random);
    SCOPED_TRACE(shape.ToString());
    Check(
        {shape},
        [&](Builder& b, std::vector<Op>& p) {
          std::vector<int64_t> permutation;
          for (int64_t d = shape.rank() - 1; d >= 0; --d) permutation.push_back(d);
          const int64_t reversed[] = {0};
          const int64_t flat[] = {shape.element_count()};
          std::vector<int64_t> wide = {2};
          std::vector<int64_t> into;
          for (int64_t d = 0; d < shape.rank(); ++d) {
            wide.push_back(shape.dimensions(d));
            into.push_back(d + 1);
          }
          Op moved = b.Rev(b.Transpose(b.Sin(p[0]), permutation), reversed);
          Op spread = b.BroadcastInDim(b.Mul(p[0], p[0]), wide, into);
          const int64_t wide_flat[] = {2 * shape.element_count()};
          const Op parts[] = {b.Reshape(moved, flat), b.Reshape(spread, wide_flat)};
          return b.ConcatInDim(parts, 0);
        },
        static_cast<uint32_t>(trial));
  }
  Check(
      {F64({5, 7}), Shape::Scalar(ElementType::kF64)},
      [](Builder& b, std::vector<Op>& p) {
        const int64_t starts[] = {1, 0};
        const int64_t limits[] = {5, 7};
        const int64_t strides[] = {2, 3};
        const PaddingDimension padding[] = {{1, -1, 1}, {0, 2, 0}};
        return b.Pad(b.Slice(b.Exp(p[0]), starts, limits, strides), b.Mul(p[1], p[1]), padding);
      },
      6);
}

TEST(AutodiffJvpTest, DynamicSliceAndDynamicUpdateSlice) {
  for (int32_t start : {1, 5}) {  // 5 is clamped
    SCOPED_TRACE(start);
    std::mt19937 random(7);
    Builder builder("dynamic");
    Op x = builder.Parameter(0, F64({4, 5}), "x");
    Op u = builder.Parameter(1, F64({2, 3}), "u");
    Op i = builder.Parameter(2, Shape::Scalar(ElementType::kS32), "i");
    const Op starts[] = {i, builder.ConstantR0<int32_t>(1)};
    const int64_t sizes[] = {3, 2};
    Op updated = builder.DynamicUpdateSlice(builder.Sin(x), builder.Mul(u, u), starts);
    builder.Tuple(std::vector<Op>{updated, builder.Exp(builder.DynamicSlice(updated, starts, sizes))});
    KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
    ExpectJvpMatches(
        *module, {0, 1},
        {RandomF64(F64({4, 5}), random), RandomF64(F64({2, 3}), random), Literal::Scalar<int32_t>(start)});
  }
}

TEST(AutodiffJvpTest, GatherAndScatterWithAddAndOverwrite) {
  std::mt19937 random(8);
  GatherDimensionNumbers rows;
  rows.offset_dims = {1};
  rows.collapsed_slice_dims = {0};
  rows.start_index_map = {0};
  rows.index_vector_dim = 1;
  ScatterDimensionNumbers scatter_rows;
  scatter_rows.update_window_dims = {1};
  scatter_rows.inserted_window_dims = {0};
  scatter_rows.scatter_dims_to_operand_dims = {0};
  scatter_rows.index_vector_dim = 1;
  auto add = Scalar(Opcode::kAdd, "add");
  Builder overwrite_builder("overwrite");
  overwrite_builder.Parameter(0, Shape::Scalar(ElementType::kF64), "old");
  Op kept = overwrite_builder.Parameter(1, Shape::Scalar(ElementType::kF64), "new");
  KILN_ASSERT_OK_AND_ASSIGN(auto overwrite, overwrite_builder.Build(kept));
  for (const Module* combiner : {add.get(), overwrite.get()}) {
    Builder builder("gather_scatter");
    Op x = builder.Parameter(0, F64({5, 3}), "x");
    Op u = builder.Parameter(1, F64({4, 3}), "u");
    // Repeated rows, and one past the end (clamped by gather, dropped by scatter).
    Op indices = builder.ConstantLiteral(Literal::FromVector<int32_t>({0, 2, 2, 7}, {4, 1}));
    const int64_t sizes[] = {1, 3};
    Op gathered = builder.Gather(builder.Mul(x, x), indices, rows, sizes);
    builder.Sin(builder.Scatter(builder.Exp(x), indices, builder.Mul(gathered, u), *combiner, scatter_rows));
    KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
    ExpectJvpMatches(*module, {0, 1}, {RandomF64(F64({5, 3}), random), RandomF64(F64({4, 3}), random)});
  }
}

// Random batch and contracting dimensions.
TEST(AutodiffJvpTest, DotGeneral) {
  std::mt19937 random(9);
  auto size = [&] { return std::uniform_int_distribution<int64_t>(1, 3)(random); };
  for (int trial = 0; trial < 4; ++trial) {
    const int64_t batch = size(), m = size(), k = size(), n = size();
    DotDimensionNumbers numbers;
    numbers.lhs_batch_dimensions = {0};
    numbers.rhs_batch_dimensions = {1};
    numbers.lhs_contracting_dimensions = {trial % 2 == 0 ? 2 : 1};
    numbers.rhs_contracting_dimensions = {0};
    const Shape lhs = trial % 2 == 0 ? F64({batch, m, k}) : F64({batch, k, m});
    const Shape rhs = F64({k, batch, n});
    SCOPED_TRACE(lhs.ToString() + " x " + rhs.ToString());
    Check(
        {lhs, rhs},
        [&](Builder& b, std::vector<Op>& p) { return b.Tanh(b.DotGeneral(p[0], b.Sin(p[1]), numbers)); },
        static_cast<uint32_t>(30 + trial));
  }
}

// Add, maximum and minimum over random dimensions; an initial value that
// is a parameter gets its share.
TEST(AutodiffJvpTest, Reductions) {
  std::mt19937 random(10);
  for (Opcode reducer : {Opcode::kAdd, Opcode::kMaximum, Opcode::kMinimum}) {
    for (int trial = 0; trial < 2; ++trial) {
      const Shape shape = RandomF64Shape(random);
      std::vector<int64_t> dimensions;
      for (int64_t d = 0; d < shape.rank(); ++d) {
        if (d % 2 == trial) dimensions.push_back(d);
      }
      SCOPED_TRACE(std::string(OpcodeName(reducer)) + " " + shape.ToString());
      auto computation = Scalar(reducer, "reducer");
      Check(
          {shape, Shape::Scalar(ElementType::kF64)},
          [&](Builder& b, std::vector<Op>& p) {
            return b.Sin(b.Reduce(b.Mul(p[0], p[0]), p[1], *computation, dimensions));
          },
          static_cast<uint32_t>(40 + trial), -1.0, 1.0);
    }
  }
}

// 2-d convolutions (NCHW / OIHW) with random strides, padding (negative
// too), base and window dilation and feature groups.
TEST(AutodiffJvpTest, Convolution) {
  std::mt19937 random(11);
  auto pick = [&](int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(random);
  };
  ConvolutionDimensionNumbers numbers;
  numbers.input_batch_dimension = 0;
  numbers.input_feature_dimension = 1;
  numbers.input_spatial_dimensions = {2, 3};
  numbers.kernel_output_feature_dimension = 0;
  numbers.kernel_input_feature_dimension = 1;
  numbers.kernel_spatial_dimensions = {2, 3};
  numbers.output_batch_dimension = 0;
  numbers.output_feature_dimension = 1;
  numbers.output_spatial_dimensions = {2, 3};
  for (int trial = 0; trial < 4; ++trial) {
    const int64_t groups = pick(1, 2);
    const int64_t in = pick(1, 2);
    std::vector<int64_t> strides, lhs_dilation, rhs_dilation, input = {pick(1, 2), in * groups},
                                                              kernel = {groups * pick(1, 2), in};
    std::vector<std::pair<int64_t, int64_t>> padding;
    for (int d = 0; d < 2; ++d) {
      for (;;) {
        const int64_t size = pick(2, 5), window = pick(1, 3), base = pick(1, 2), dilation = pick(1, 2);
        const int64_t low = pick(-1, 2), high = pick(-1, 2);
        if ((size - 1) * base + 1 + low + high < (window - 1) * dilation + 1) continue;
        input.push_back(size);
        kernel.push_back(window);
        strides.push_back(pick(1, 2));
        lhs_dilation.push_back(base);
        rhs_dilation.push_back(dilation);
        padding.push_back({low, high});
        break;
      }
    }
    SCOPED_TRACE(F64(input).ToString() + " * " + F64(kernel).ToString());
    Check(
        {F64(input), F64(kernel)},
        [&](Builder& b, std::vector<Op>& p) {
          return b.Tanh(b.ConvGeneralDilated(p[0], p[1], strides, padding, lhs_dilation, rhs_dilation,
                                             numbers, groups));
        },
        static_cast<uint32_t>(50 + trial));
  }
}

// Sum, max and min windows with random strides, padding, base and window
// dilation; the initial value a parameter.
TEST(AutodiffJvpTest, ReduceWindow) {
  std::mt19937 random(12);
  auto pick = [&](int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(random);
  };
  for (Opcode reducer : {Opcode::kAdd, Opcode::kMaximum, Opcode::kMinimum}) {
    for (int trial = 0; trial < 3; ++trial) {
      std::vector<int64_t> dimensions, sizes, strides, base_dilation, window_dilation;
      std::vector<std::pair<int64_t, int64_t>> padding;
      for (int d = 0; d < 2; ++d) {
        for (;;) {
          const int64_t size = pick(2, 5), window = pick(1, 3), base = pick(1, 2);
          // Reverse mode refuses max-pooling with window dilation, as JAX does.
          const int64_t dilation = reducer == Opcode::kAdd ? pick(1, 2) : 1;
          const int64_t low = pick(-1, 2), high = pick(-1, 2);
          if ((size - 1) * base + 1 + low + high < (window - 1) * dilation + 1) continue;
          dimensions.push_back(size);
          sizes.push_back(window);
          strides.push_back(pick(1, 3));
          base_dilation.push_back(base);
          window_dilation.push_back(dilation);
          padding.push_back({low, high});
          break;
        }
      }
      SCOPED_TRACE(std::string(OpcodeName(reducer)) + " " + F64(dimensions).ToString());
      auto computation = Scalar(reducer, "reducer");
      Check(
          {F64(dimensions), Shape::Scalar(ElementType::kF64)},
          [&](Builder& b, std::vector<Op>& p) {
            const Op operands[] = {p[0]};
            const Op inits[] = {p[1]};
            return b.Sin(b.ReduceWindowWithGeneralPadding(operands, inits, *computation, sizes, strides,
                                                          base_dilation, window_dilation, padding));
          },
          static_cast<uint32_t>(60 + trial), -1.0, 1.0);
    }
  }
}

// Ties in a max window: the first tied element's tangent, as reverse mode
// gives the first the cotangent.
TEST(AutodiffJvpTest, MaxWindowTiesPassTheFirstTangent) {
  Builder builder("pool");
  Op x = builder.Parameter(0, F64({4}), "x");
  auto max = Scalar(Opcode::kMaximum, "max");
  const int64_t window[] = {2};
  const int64_t stride[] = {2};
  builder.ReduceWindow(x, builder.ConstantR0<double>(-100), *max, window, stride, Padding::kValid);
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  KILN_ASSERT_OK_AND_ASSIGN(auto jvp, autodiff::BuildJvp(*module, std::vector<int64_t>{0}));
  const Literal inputs[] = {Literal::FromVector<double>({3, 3, 1, 2}),
                            Literal::FromVector<double>({5, 7, 11, 13})};
  for (const char* backend : {"interpreter", "cpu"}) {
    KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Run(*jvp, inputs, backend));
    EXPECT_EQ(result.tuple_elements()[1], Literal::FromVector<double>({5, 13})) << backend;
  }
}

TEST(AutodiffJvpTest, SortAndTopK) {
  std::mt19937 random(13);
  for (int trial = 0; trial < 3; ++trial) {
    const Shape shape = RandomF64Shape(random);
    const int64_t dimension = std::uniform_int_distribution<int64_t>(0, shape.rank() - 1)(random);
    SCOPED_TRACE(shape.ToString() + " dimension " + std::to_string(dimension));
    Builder builder("sort");
    Op keys = builder.Parameter(0, shape, "keys");
    Op values = builder.Parameter(1, shape, "values");
    const Shape s32(ElementType::kS32, shape.dimensions());
    KILN_ASSERT_OK_AND_ASSIGN(auto greater, [&] {
      Builder c("greater");
      Op a = c.Parameter(0, Shape::Scalar(ElementType::kF64), "a");
      Op b = c.Parameter(1, Shape::Scalar(ElementType::kF64), "b");
      c.Parameter(2, Shape::Scalar(ElementType::kF64), "c");
      c.Parameter(3, Shape::Scalar(ElementType::kF64), "d");
      c.Parameter(4, Shape::Scalar(ElementType::kS32), "e");
      c.Parameter(5, Shape::Scalar(ElementType::kS32), "f");
      c.Gt(a, b);
      return c.Build();
    }());
    const Op operands[] = {builder.Sin(keys), builder.Mul(values, keys), builder.Iota(s32, dimension)};
    Op sorted = builder.Sort(operands, *greater, dimension, /*is_stable=*/true);
    Op top = builder.TopK(builder.Exp(values), std::uniform_int_distribution<int64_t>(
                                                   1, shape.dimensions(shape.rank() - 1))(random));
    builder.Tuple(std::vector<Op>{builder.GetTupleElement(sorted, 0), builder.GetTupleElement(sorted, 1),
                                  builder.GetTupleElement(sorted, 2), builder.GetTupleElement(top, 0),
                                  builder.GetTupleElement(top, 1)});
    KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
    ExpectJvpMatches(*module, {0, 1}, {RandomF64(shape, random), RandomF64(shape, random)},
                     static_cast<uint32_t>(70 + trial));
  }
}

// Select-and-scatter (a GE select, an add scatter: max-pooling's gradient)
// is linear in its source and initial value; all-reduce with add, copy,
// reduce-precision and an optimization barrier pass the tangent on.
TEST(AutodiffJvpTest, SelectAndScatterAllReduceAndIdentities) {
  std::mt19937 random(15);
  auto add = Scalar(Opcode::kAdd, "add");
  Builder select_builder("ge");
  Op lhs = select_builder.Parameter(0, Shape::Scalar(ElementType::kF64), "lhs");
  Op rhs = select_builder.Parameter(1, Shape::Scalar(ElementType::kF64), "rhs");
  select_builder.Ge(lhs, rhs);
  KILN_ASSERT_OK_AND_ASSIGN(auto ge, select_builder.Build());
  for (int trial = 0; trial < 3; ++trial) {
    const int64_t size = std::uniform_int_distribution<int64_t>(4, 7)(random);
    const int64_t windows = (size - 2) / 2 + 1;  // window 2, stride 2, no padding
    SCOPED_TRACE(size);
    Check(
        {F64({size, 3}), F64({windows, 3}), Shape::Scalar(ElementType::kF64)},
        [&](Builder& b, std::vector<Op>& p) {
          const int64_t window[] = {2, 1};
          const int64_t strides[] = {2, 1};
          const std::pair<int64_t, int64_t> padding[] = {{0, 0}, {0, 0}};
          Op scattered = b.SelectAndScatterWithGeneralPadding(p[0], *ge, window, strides, padding,
                                                              b.Mul(p[1], p[1]), p[2], *add);
          Op passed = b.OptimizationBarrier(b.ReducePrecision(b.Copy(b.AllReduce(scattered, *add)), 11, 52));
          return b.Mul(b.Sin(p[0]), passed);
        },
        static_cast<uint32_t>(80 + trial));
  }
}

// Forward over reverse: the JVP of a gradient module (Hessian-vector
// products of a small network's loss) against differences of the gradient.
TEST(AutodiffJvpTest, ForwardOverReverseGivesHessianVectorProducts) {
  std::mt19937 random(16);
  auto add = Scalar(Opcode::kAdd, "add");
  Builder builder("loss");
  Op w = builder.Parameter(0, F64({3, 4}), "w");
  Op x = builder.Parameter(1, F64({4}), "x");
  DotDimensionNumbers numbers;
  numbers.lhs_contracting_dimensions = {1};
  numbers.rhs_contracting_dimensions = {0};
  const int64_t all[] = {0};
  Op hidden = builder.Tanh(builder.DotGeneral(w, builder.Sin(x), numbers));
  builder.Reduce(builder.Mul(hidden, hidden), builder.ConstantR0<double>(0.0), *add, all);
  KILN_ASSERT_OK_AND_ASSIGN(auto loss, builder.Build());
  KILN_ASSERT_OK_AND_ASSIGN(auto gradient, autodiff::BuildVjp(*loss, std::vector<int64_t>{0, 1}));
  ExpectJvpMatches(*gradient, {0, 1}, {RandomF64(F64({3, 4}), random), RandomF64(F64({4}), random)}, 16);
}

// JAX wraps functions in calls (inlined first); the partitioner's
// annotations pass the tangent through.
TEST(AutodiffJvpTest, CallsAndShardingAnnotations) {
  std::mt19937 random(14);
  Builder callee_builder("callee");
  Op y = callee_builder.Parameter(0, F64({4}), "y");
  Op z = callee_builder.Parameter(1, F64({4}), "z");
  callee_builder.Mul(y, callee_builder.Sin(z));
  KILN_ASSERT_OK_AND_ASSIGN(auto callee, callee_builder.Build());
  Builder builder("caller");
  Op x = builder.Parameter(0, F64({4}), "x");
  Op w = builder.Parameter(1, F64({4}), "w");
  const Op arguments[] = {builder.Exp(x), builder.CustomCall("Sharding", std::vector<Op>{w}, F64({4}))};
  builder.Call(*callee, arguments);
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  ExpectJvpMatches(*module, {0, 1}, {RandomF64(F64({4}), random), RandomF64(F64({4}), random)});
}

}  // namespace
}  // namespace kiln
