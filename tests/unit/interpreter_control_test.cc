// Control flow, host communication, custom calls, random numbers, batch
// normalisation and the backend's own contract (argument checks; threads are
// in interpreter_concurrency_test.cc).
#include <cmath>

#include "tests/unit/test_util.h"

namespace kiln {
namespace {

using testing::BuildAndRun;
using testing::LiteralNear;

std::unique_ptr<Module> ScalarFunction(const std::string& name, double factor) {
  Builder builder(name);
  Op x = builder.Parameter(0, Shape::Scalar(ElementType::kF32), "x");
  builder.Mul(x, builder.ConstantR0<float>(static_cast<float>(factor)));
  StatusOr<std::unique_ptr<Module>> module = builder.Build();
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

StatusOr<Literal> RunBranch(int32_t index) {
  std::unique_ptr<Module> times2 = ScalarFunction("times2", 2), times3 = ScalarFunction("times3", 3),
                          times5 = ScalarFunction("times5", 5);
  Builder builder("switch");
  Op x = builder.ConstantR0<float>(1.5f);
  const Module* branches[] = {times2.get(), times3.get(), times5.get()};
  const Op operands[] = {x, x, x};
  builder.Conditional(builder.ConstantR0<int32_t>(index), branches, operands);
  return BuildAndRun(builder);
}

TEST(InterpreterControlTest, ConditionalOutOfRangeIndexRunsTheLastBranch) {
  for (auto [index, expected] : std::vector<std::pair<int32_t, float>>{
           {0, 3.0f}, {1, 4.5f}, {2, 7.5f}, {3, 7.5f}, {-1, 7.5f}, {1000, 7.5f}}) {
    KILN_ASSERT_OK_AND_ASSIGN(Literal result, RunBranch(index));
    EXPECT_EQ(result, Literal::Scalar<float>(expected)) << "index " << index;
  }
}

TEST(InterpreterControlTest, PredicatedConditional) {
  std::unique_ptr<Module> times2 = ScalarFunction("times2", 2), times3 = ScalarFunction("times3", 3);
  for (bool predicate : {true, false}) {
    Builder builder("if");
    Op x = builder.ConstantR0<float>(2.0f);
    builder.Conditional(builder.ConstantR0<bool>(predicate), x, *times2, x, *times3);
    KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
    EXPECT_EQ(result, Literal::Scalar<float>(predicate ? 4.0f : 6.0f));
  }
}

TEST(InterpreterControlTest, WhileLoopCarriesATuple) {
  // (i, product): while i < 10 { product *= 2; i += 1 }.
  const Shape state = Shape::Tuple({Shape::Scalar(ElementType::kS32), Shape::Scalar(ElementType::kS64)});
  Builder condition("cond");
  condition.Lt(condition.GetTupleElement(condition.Parameter(0, state, "s"), 0),
               condition.ConstantR0<int32_t>(10));
  KILN_ASSERT_OK_AND_ASSIGN(auto condition_module, condition.Build());
  Builder body("body");
  Op s = body.Parameter(0, state, "s");
  const Op next[] = {body.Add(body.GetTupleElement(s, 0), body.ConstantR0<int32_t>(1)),
                     body.Mul(body.GetTupleElement(s, 1), body.ConstantR0<int64_t>(2))};
  body.Tuple(next);
  KILN_ASSERT_OK_AND_ASSIGN(auto body_module, body.Build());
  Builder builder("loop");
  const Op init[] = {builder.ConstantR0<int32_t>(0), builder.ConstantR0<int64_t>(3)};
  builder.While(*condition_module, *body_module, builder.Tuple(init));
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result.tuple_elements()[0], Literal::Scalar<int32_t>(10));
  EXPECT_EQ(result.tuple_elements()[1], Literal::Scalar<int64_t>(3072));
}

TEST(InterpreterControlTest, CallAndOptimizationBarrier) {
  std::unique_ptr<Module> times3 = ScalarFunction("times3", 3);
  Builder builder("call");
  const Op arguments[] = {builder.ConstantR0<float>(2.0f)};
  builder.OptimizationBarrier(builder.Call(*times3, arguments));
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result, Literal::Scalar<float>(6.0f));
}

TEST(InterpreterControlTest, InfeedWithAnEmptyQueueFailsInsteadOfHanging) {
  Builder builder("infeed");
  builder.Infeed(Shape(ElementType::kF32, {2}));
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  StatusOr<Literal> result = testing::Run(*module);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kFailedPrecondition) << result.status().ToString();
}

TEST(InterpreterControlTest, InfeedAndOutfeedQueues) {
  Builder builder("feeds");
  Op data = builder.Infeed(Shape(ElementType::kS32, {2}));
  Op doubled = builder.Add(data, data);
  builder.Outfeed(doubled);
  builder.Add(doubled, builder.ConstantR1<int32_t>({1, 1}));
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  KILN_ASSERT_OK_AND_ASSIGN(auto backend, CreateBackend("interpreter"));
  KILN_ASSERT_OK(backend->TransferToInfeed(Literal::FromVector<int32_t>({3, 4})));
  KILN_ASSERT_OK(backend->TransferToInfeed(Literal::FromVector<int32_t>({10, 20})));
  for (const auto& expected : {std::vector<int32_t>{6, 8}, std::vector<int32_t>{20, 40}}) {
    KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Execute(*backend, *module, {}));
    EXPECT_EQ(result, Literal::FromVector<int32_t>({expected[0] + 1, expected[1] + 1}));
    KILN_ASSERT_OK_AND_ASSIGN(Literal fed_out, backend->TransferFromOutfeed());
    EXPECT_EQ(fed_out, Literal::FromVector<int32_t>(expected));
  }
  EXPECT_EQ(backend->TransferFromOutfeed().status().code(), StatusCode::kFailedPrecondition);
}

void AddOneAndSum(void* out, const void** in) {
  auto** outputs = static_cast<void**>(out);
  const auto* x = static_cast<const float*>(in[0]);
  auto* plus_one = static_cast<float*>(outputs[0]);
  auto* sum = static_cast<float*>(outputs[1]);
  sum[0] = 0;
  for (int i = 0; i < 3; ++i) {
    plus_one[i] = x[i] + 1.0f;
    sum[0] += x[i];
  }
}

TEST(InterpreterControlTest, CustomCallWithTupleResult) {
  KILN_ASSERT_OK(RegisterCustomCallTarget("interpreter_test_add_one_and_sum", &AddOneAndSum));
  Builder builder("custom_call");
  const Op operands[] = {builder.ConstantR1<float>({1, 2, 3})};
  builder.CustomCall("interpreter_test_add_one_and_sum", operands,
                     Shape::Tuple({Shape(ElementType::kF32, {3}), Shape::Scalar(ElementType::kF32)}));
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result.tuple_elements()[0], Literal::FromVector<float>({2, 3, 4}));
  EXPECT_EQ(result.tuple_elements()[1], Literal::Scalar<float>(6));
}

TEST(InterpreterControlTest, UnknownCustomCallTargetIsNotFound) {
  Builder builder("custom_call_missing");
  const Op operands[] = {builder.ConstantR1<float>({1})};
  builder.CustomCall("interpreter_test_no_such_target", operands, Shape(ElementType::kF32, {1}));
  StatusOr<Literal> result = BuildAndRun(builder);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kNotFound);
  EXPECT_NE(result.status().message().find("interpreter_test_no_such_target"), std::string::npos);
}

TEST(InterpreterControlTest, RngIsDeterministicForASeedAndInRange) {
  Builder builder("rng");
  Op uniform = builder.RngUniform(builder.ConstantR0<float>(2.0f), builder.ConstantR0<float>(3.0f),
                                  Shape(ElementType::kF32, {1000}));
  Op integers = builder.RngUniform(builder.ConstantR0<int32_t>(-3), builder.ConstantR0<int32_t>(4),
                                   Shape(ElementType::kS32, {1000}));
  Op normal = builder.RngNormal(builder.ConstantR0<double>(10.0), builder.ConstantR0<double>(2.0),
                                Shape(ElementType::kF64, {4000}));
  const Op outputs[] = {uniform, integers, normal};
  builder.Tuple(outputs);
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  ExecuteOptions seed_a, seed_b;
  seed_a.rng_seed = 42;
  seed_b.rng_seed = 43;
  KILN_ASSERT_OK_AND_ASSIGN(Literal first, testing::Run(*module, {}, "interpreter", seed_a));
  KILN_ASSERT_OK_AND_ASSIGN(Literal again, testing::Run(*module, {}, "interpreter", seed_a));
  KILN_ASSERT_OK_AND_ASSIGN(Literal other, testing::Run(*module, {}, "interpreter", seed_b));
  EXPECT_EQ(first, again);
  EXPECT_NE(first, other);
  for (float v : first.tuple_elements()[0].data<float>()) {
    EXPECT_GE(v, 2.0f);
    EXPECT_LT(v, 3.0f);
  }
  for (int32_t v : first.tuple_elements()[1].data<int32_t>()) {
    EXPECT_GE(v, -3);
    EXPECT_LT(v, 4);
  }
  double mean = 0, square = 0;
  for (double v : first.tuple_elements()[2].data<double>()) {
    mean += v;
    square += v * v;
  }
  mean /= 4000;
  const double deviation = std::sqrt(square / 4000 - mean * mean);
  EXPECT_NEAR(mean, 10.0, 0.2);
  EXPECT_NEAR(deviation, 2.0, 0.2);
}

TEST(InterpreterControlTest, RngBitGeneratorThreefryKnownAnswer) {
  // Threefry-2x32-20 known-answer vector (Random123): key = 0, counter = 0
  // encrypts to (0x6b200159, 0x99ba4efe).
  Builder builder("rbg");
  Op state = builder.ConstantR1<uint64_t>({0, 0});
  Op generated = builder.RngBitGenerator(RngAlgorithm::kThreeFry, state, Shape(ElementType::kU32, {4}));
  builder.Tuple(
      std::vector<Op>{builder.GetTupleElement(generated, 0), builder.GetTupleElement(generated, 1)});
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result.tuple_elements()[0], Literal::FromVector<uint64_t>({0, 2}));
  const auto bits = result.tuple_elements()[1].data<uint32_t>();
  EXPECT_EQ(bits[0], 0x6b200159u);
  EXPECT_EQ(bits[1], 0x99ba4efeu);
  EXPECT_NE(bits[2], bits[0]);
}

TEST(InterpreterControlTest, RngBitGeneratorPhiloxKnownAnswer) {
  // Philox-4x32-10 known-answer vector (Random123): key = 0, counter = 0
  // encrypts to (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8).
  Builder builder("rbg_philox");
  Op state = builder.ConstantR1<uint64_t>({0, 0, 0});
  Op generated = builder.RngBitGenerator(RngAlgorithm::kPhilox, state, Shape(ElementType::kU32, {4}));
  builder.GetTupleElement(generated, 1);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result, Literal::FromVector<uint32_t>({0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
}

TEST(InterpreterControlTest, BatchNormTrainingInferenceAndGrad) {
  // Operand [2, 2] with features in dimension 1: feature 0 = {1, 3}, feature 1 = {2, 6}.
  const Literal x = Literal::FromVector<float>({1, 2, 3, 6}, {2, 2});
  Builder builder("batch_norm");
  Op operand = builder.ConstantLiteral(x);
  Op scale = builder.ConstantR1<float>({1, 2});
  Op offset = builder.ConstantR1<float>({0, 1});
  Op training = builder.BatchNormTraining(operand, scale, offset, 0.0f, 1);
  Op mean = builder.ConstantR1<float>({2, 4});
  Op variance = builder.ConstantR1<float>({1, 4});
  Op inference = builder.BatchNormInference(operand, scale, offset, mean, variance, 0.0f, 1);
  Op grad_mean = builder.ConstantR1<float>({1, 4});
  Op grad_output = builder.ConstantLiteral(Literal::FromVector<float>({1, 1, 0, 2}, {2, 2}));
  Op grad = builder.BatchNormGrad(operand, scale, grad_mean, variance, grad_output, 0.0f, 1);
  const Op outputs[] = {training, inference, grad};
  builder.Tuple(outputs);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  const Literal& trained = result.tuple_elements()[0];
  EXPECT_TRUE(
      LiteralNear(Literal::FromVector<float>({-1, -1, 1, 3}, {2, 2}), trained.tuple_elements()[0], 1e-6));
  EXPECT_TRUE(LiteralNear(Literal::FromVector<float>({2, 4}), trained.tuple_elements()[1], 1e-6));
  EXPECT_TRUE(LiteralNear(Literal::FromVector<float>({1, 4}), trained.tuple_elements()[2], 1e-6));
  EXPECT_TRUE(
      LiteralNear(Literal::FromVector<float>({-1, -1, 1, 3}, {2, 2}), result.tuple_elements()[1], 1e-6));
  // Feature 0: x - mean = {0, 2}, dy = {1, 0}, std 1, scale 1: grad_offset 1,
  // grad_scale 0, grad_x = dy - mean(dy) - (x - mean) * mean(dy * (x - mean)) = {0.5, -0.5}.
  // Feature 1: x - mean = {-2, 2}, dy = {1, 2}, std 2, scale 2: grad_offset 3,
  // grad_scale 1, grad_x = dy - 1.5 - (x - mean) * 0.25 = {0, 0}.
  const Literal& grads = result.tuple_elements()[2];
  EXPECT_TRUE(
      LiteralNear(Literal::FromVector<float>({0.5f, 0, -0.5f, 0}, {2, 2}), grads.tuple_elements()[0], 1e-6));
  EXPECT_TRUE(LiteralNear(Literal::FromVector<float>({0, 1}), grads.tuple_elements()[1], 1e-6));
  EXPECT_TRUE(LiteralNear(Literal::FromVector<float>({1, 3}), grads.tuple_elements()[2], 1e-6));
}

TEST(InterpreterControlTest, ReplicaAndPartitionIdAreZero) {
  Builder builder("ids");
  const Op ids[] = {builder.AddInstruction(Opcode::kReplicaId, {}, Attributes{}),
                    builder.AddInstruction(Opcode::kPartitionId, {}, Attributes{})};
  builder.Tuple(ids);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result.tuple_elements()[0], Literal::Scalar<uint32_t>(0));
  EXPECT_EQ(result.tuple_elements()[1], Literal::Scalar<uint32_t>(0));
}

TEST(InterpreterBackendTest, DescribesItself) {
  KILN_ASSERT_OK_AND_ASSIGN(auto backend, CreateBackend("interpreter"));
  EXPECT_EQ(backend->name(), "interpreter");
  ASSERT_EQ(backend->devices().size(), 1u);
  EXPECT_EQ(backend->devices()[0]->description(), "interpreter:0 (host reference)");
  EXPECT_TRUE(backend->SupportsElementType(ElementType::kC128));
  EXPECT_EQ(CreateBackend("no-such-backend").status().code(), StatusCode::kNotFound);
  const std::vector<std::string> names = BackendNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "interpreter"), names.end());
}

TEST(InterpreterBackendTest, ExecuteChecksArgumentCountAndShapes) {
  Builder builder("params");
  builder.Add(builder.Parameter(0, Shape(ElementType::kF32, {2}), "a"),
              builder.Parameter(1, Shape(ElementType::kF32, {2}), "b"));
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  KILN_ASSERT_OK_AND_ASSIGN(auto backend, CreateBackend("interpreter"));
  KILN_ASSERT_OK_AND_ASSIGN(auto executable, backend->Compile(*module, CompileOptions{}));
  KILN_ASSERT_OK_AND_ASSIGN(auto good,
                            backend->BufferFromLiteral(Literal::FromVector<float>({1, 2}), nullptr));
  KILN_ASSERT_OK_AND_ASSIGN(auto bad,
                            backend->BufferFromLiteral(Literal::FromVector<float>({1, 2, 3}), nullptr));
  DeviceBuffer* one[] = {good.get()};
  EXPECT_EQ(executable->Execute(one, {}).status().code(), StatusCode::kInvalidArgument);
  DeviceBuffer* mismatched[] = {good.get(), bad.get()};
  const Status status = executable->Execute(mismatched, {}).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("parameter 1"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("f32[2]"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("f32[3]"), std::string::npos) << status.message();
  DeviceBuffer* with_null[] = {good.get(), nullptr};
  EXPECT_EQ(executable->Execute(with_null, {}).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
