// Reverse mode over batch-norm-training (all three results) and
// batch-norm-inference (all five operands): gradients against f64 central
// differences on random shapes and feature dimensions, on the interpreter
// and cpu; batch-norm-grad's refusal. Forward mode over all three ops
// (core/autodiff/jvp_batch_norm_rules.cc): tangents against central
// differences and, where reverse mode has a rule, <w, J v> == <J^T w, v>.
#include <random>
#include <string>

#include "tests/unit/autodiff_gradient_check.h"
#include "tests/unit/autodiff_jvp_check.h"

namespace kiln {
namespace {

using testing::ExpectGradientsMatchFiniteDifferences;
using testing::RandomF64;

struct RandomCase {
  Shape operand, feature;
  int64_t feature_index = 0;
};

RandomCase MakeCase(std::mt19937& random) {
  auto pick = [&](int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(random);
  };
  RandomCase c;
  std::vector<int64_t> dimensions(static_cast<size_t>(pick(2, 4)));
  for (int64_t& dimension : dimensions) dimension = pick(1, 3);
  c.feature_index = pick(0, static_cast<int64_t>(dimensions.size()) - 1);
  // At least two elements per feature, so that the variance is not zero.
  dimensions[c.feature_index == 0 ? 1 : 0] = pick(2, 3);
  c.operand = Shape(ElementType::kF64, dimensions);
  c.feature = Shape(ElementType::kF64, {dimensions[static_cast<size_t>(c.feature_index)]});
  return c;
}

TEST(AutodiffBatchNormTest, TrainingThroughAllThreeResults) {
  std::mt19937 random(1);
  for (int trial = 0; trial < 6; ++trial) {
    const RandomCase c = MakeCase(random);
    SCOPED_TRACE(c.operand.ToString() + " feature " + std::to_string(c.feature_index));
    Builder builder("bn_training");
    Op x = builder.Parameter(0, c.operand, "x");
    Op scale = builder.Parameter(1, c.feature, "scale");
    Op offset = builder.Parameter(2, c.feature, "offset");
    Op normalized = builder.BatchNormTraining(builder.Sin(x), scale, offset, 0.01f, c.feature_index);
    const Op results[] = {builder.Tanh(builder.GetTupleElement(normalized, 0)),
                          builder.Exp(builder.GetTupleElement(normalized, 1)),
                          builder.Sqrt(builder.GetTupleElement(normalized, 2))};
    builder.Tuple(results);
    KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
    const std::vector<Literal> inputs = {RandomF64(c.operand, random), RandomF64(c.feature, random),
                                         RandomF64(c.feature, random)};
    ExpectGradientsMatchFiniteDifferences(*module, {0, 1, 2}, inputs, static_cast<uint32_t>(trial),
                                          {1e-6, 1e-5});
    testing::ExpectJvpMatches(*module, {0, 1, 2}, inputs, static_cast<uint32_t>(trial), {1e-6, 1e-5});
  }
}

TEST(AutodiffBatchNormTest, TrainingThroughTheOutputOnly) {
  std::mt19937 random(2);
  const RandomCase c = MakeCase(random);
  Builder builder("bn_training");
  Op x = builder.Parameter(0, c.operand, "x");
  Op scale = builder.Parameter(1, c.feature, "scale");
  Op offset = builder.Parameter(2, c.feature, "offset");
  builder.GetTupleElement(builder.BatchNormTraining(x, scale, offset, 0.001f, c.feature_index), 0);
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  ExpectGradientsMatchFiniteDifferences(
      *module, {0, 1, 2},
      {RandomF64(c.operand, random), RandomF64(c.feature, random), RandomF64(c.feature, random)}, 3,
      {1e-6, 1e-5});
}

TEST(AutodiffBatchNormTest, InferenceAllOperands) {
  std::mt19937 random(4);
  for (int trial = 0; trial < 5; ++trial) {
    const RandomCase c = MakeCase(random);
    SCOPED_TRACE(c.operand.ToString() + " feature " + std::to_string(c.feature_index));
    Builder builder("bn_inference");
    Op x = builder.Parameter(0, c.operand, "x");
    Op scale = builder.Parameter(1, c.feature, "scale");
    Op offset = builder.Parameter(2, c.feature, "offset");
    Op mean = builder.Parameter(3, c.feature, "mean");
    Op variance = builder.Parameter(4, c.feature, "variance");
    builder.Sin(builder.BatchNormInference(x, scale, offset, mean, variance, 0.01f, c.feature_index));
    KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
    const std::vector<Literal> inputs = {RandomF64(c.operand, random), RandomF64(c.feature, random),
                                         RandomF64(c.feature, random), RandomF64(c.feature, random),
                                         RandomF64(c.feature, random, 0.5, 2.0)};
    ExpectGradientsMatchFiniteDifferences(*module, {0, 1, 2, 3, 4}, inputs, static_cast<uint32_t>(trial));
    testing::ExpectJvpMatches(*module, {0, 1, 2, 3, 4}, inputs, static_cast<uint32_t>(trial));
  }
}

TEST(AutodiffBatchNormTest, BatchNormGradIsRefusedByName) {
  const Shape operand(ElementType::kF64, {2, 3});
  const Shape feature(ElementType::kF64, {3});
  Builder builder("bn_grad");
  Op x = builder.Parameter(0, operand, "x");
  Op scale = builder.Parameter(1, feature, "scale");
  Op mean = builder.Parameter(2, feature, "mean");
  Op variance = builder.Parameter(3, feature, "variance");
  Op g = builder.Parameter(4, operand, "g");
  builder.GetTupleElement(builder.BatchNormGrad(x, scale, mean, variance, g, 0.01f, 1), 0);
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  const auto vjp = autodiff::BuildVjp(*module, std::vector<int64_t>{0});
  ASSERT_FALSE(vjp.ok());
  EXPECT_EQ(vjp.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(vjp.status().message().find("'batch-norm-grad'"), std::string::npos) << vjp.status().message();
}

// Forward mode differentiates batch-norm-grad through its formulas (JAX has
// no such op, so reverse mode refuses it and there is no <w, J v> check).
TEST(AutodiffBatchNormTest, BatchNormGradForward) {
  std::mt19937 random(6);
  for (int trial = 0; trial < 4; ++trial) {
    const RandomCase c = MakeCase(random);
    SCOPED_TRACE(c.operand.ToString() + " feature " + std::to_string(c.feature_index));
    Builder builder("bn_grad");
    Op x = builder.Parameter(0, c.operand, "x");
    Op scale = builder.Parameter(1, c.feature, "scale");
    Op mean = builder.Parameter(2, c.feature, "mean");
    Op variance = builder.Parameter(3, c.feature, "variance");
    Op g = builder.Parameter(4, c.operand, "g");
    builder.BatchNormGrad(x, scale, mean, variance, g, 0.01f, c.feature_index);
    KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
    testing::ExpectJvpMatches(
        *module, {0, 1, 2, 3, 4},
        {RandomF64(c.operand, random), RandomF64(c.feature, random), RandomF64(c.feature, random),
         RandomF64(c.feature, random, 0.5, 2.0), RandomF64(c.operand, random)},
        static_cast<uint32_t>(trial), {1e-6, 1e-6, false});
  }
}

}  // namespace
}  // namespace kiln
