// The finite-difference gradient checker of the autodiff tests: builds a
// module's VJP (core/autodiff/vjp.h), runs it on the interpreter and on
// cpu, and compares each gradient with f64 central differences of the
// forward module projected on the same random cotangents.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/autodiff/vjp.h"
#include "core/backend.h"
#include "core/builder.h"
#include "core/literal.h"
#include "tests/unit/test_util.h"

namespace kiln::testing {

inline Shape F64(std::vector<int64_t> dimensions) { return Shape(ElementType::kF64, std::move(dimensions)); }

// A module with one parameter per shape ("p0", "p1", ...), rooted at the op
// `body(builder, parameters)` returns; nullptr (and a failed expectation)
// when it does not build.
template <typename Body>
std::unique_ptr<Module> BuildModule(const std::vector<Shape>& shapes, Body body) {
  Builder builder("f");
  std::vector<Op> parameters;
  for (size_t i = 0; i < shapes.size(); ++i) {
    parameters.push_back(builder.Parameter(static_cast<int64_t>(i), shapes[i], "p" + std::to_string(i)));
  }
  Op root = body(builder, parameters);
  auto module = builder.Build(root);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

// Values uniform in [low, high) of an f64 shape.
inline Literal RandomF64(const Shape& shape, std::mt19937& random, double low = -2.0, double high = 2.0) {
  Literal literal(shape);
  std::uniform_real_distribution<double> values(low, high);
  for (double& value : literal.data<double>()) value = values(random);
  return literal;
}

// A random f64 shape of rank 1 to `max_rank` with dimensions 1 to 4.
inline Shape RandomF64Shape(std::mt19937& random, int64_t max_rank = 3) {
  std::uniform_int_distribution<int64_t> rank(1, max_rank);
  std::uniform_int_distribution<int64_t> size(1, 4);
  std::vector<int64_t> dimensions(static_cast<size_t>(rank(random)));
  for (int64_t& dimension : dimensions) dimension = size(random);
  return Shape(ElementType::kF64, dimensions);
}

struct GradientTolerance {
  double step = 1e-5;
  double relative = 1e-6;
};

// The result of running a module once: its leaves.
inline std::vector<Literal> RunLeaves(Executable& executable, Backend& backend,
                                      std::span<const Literal> inputs) {
  std::vector<std::unique_ptr<DeviceBuffer>> owned;
  std::vector<DeviceBuffer*> buffers;
  for (const Literal& input : inputs) {
    auto buffer = backend.BufferFromLiteral(input, backend.devices()[0]);
    EXPECT_TRUE(buffer.ok()) << buffer.status().ToString();
    if (!buffer.ok()) return {};
    buffers.push_back(buffer->get());
    owned.push_back(std::move(buffer).value());
  }
  auto results = executable.Execute(buffers, {});
  EXPECT_TRUE(results.ok()) << results.status().ToString();
  if (!results.ok()) return {};
  std::vector<Literal> leaves;
  for (const auto& result : *results) leaves.push_back(std::move(result->ToLiteral()).value());
  return leaves;
}

// Sum over the float leaves of <cotangent, leaf>.
inline double Project(const std::vector<Literal>& leaves, const std::vector<Literal>& cotangents) {
  double sum = 0.0;
  for (size_t l = 0; l < leaves.size(); ++l) {
    if (!IsFloating(leaves[l].shape().element_type())) continue;
    for (int64_t i = 0; i < leaves[l].element_count(); ++i) {
      sum += leaves[l].GetAsDouble(i) * cotangents[l].GetAsDouble(i);
    }
  }
  return sum;
}

// Checks every gradient BuildVjp gives for `forward` (parameters `wrt`, at
// `inputs`) against central differences, on the interpreter and on cpu.
// Cotangents are random (seeded), or 1 for a scalar result.
inline void ExpectGradientsMatchFiniteDifferences(const Module& forward, std::vector<int64_t> wrt,
                                                  std::vector<Literal> inputs, uint32_t seed = 1,
                                                  GradientTolerance tolerance = {}) {
  SCOPED_TRACE(forward.ToString());
  StatusOr<std::unique_ptr<Module>> vjp = autodiff::BuildVjp(forward, wrt);
  ASSERT_TRUE(vjp.ok()) << vjp.status().ToString();
  const Shape& result = forward.entry()->root()->shape;
  const std::vector<Shape> result_leaves = result.Leaves();
  std::mt19937 random(seed);
  std::vector<Literal> cotangents;
  std::vector<Literal> vjp_inputs = inputs;
  if (result.IsScalar()) {
    cotangents.push_back(Literal::Scalar<double>(1.0));
  } else {
    for (const Shape& leaf : result_leaves) {
      Literal cotangent = leaf.element_type() == ElementType::kF64 ? RandomF64(leaf, random) : Literal(leaf);
      vjp_inputs.push_back(cotangent);
      cotangents.push_back(std::move(cotangent));
    }
  }
  ASSERT_EQ((*vjp)->entry()->parameters().size(), vjp_inputs.size());

  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> interpreter, CreateBackend("interpreter"));
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> forward_executable,
                            interpreter->Compile(forward, CompileOptions{}));
  for (const char* backend_name : {"interpreter", "cpu"}) {
    SCOPED_TRACE(backend_name);
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> backend, CreateBackend(backend_name));
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable,
                              backend->Compile(**vjp, CompileOptions{}));
    const std::vector<Literal> gradient_leaves = RunLeaves(*executable, *backend, vjp_inputs);
    ASSERT_EQ(gradient_leaves.size(), result_leaves.size() + wrt.size());
    // The forward results come back unchanged.
    const std::vector<Literal> forward_leaves = RunLeaves(*forward_executable, *interpreter, inputs);
    for (size_t l = 0; l < result_leaves.size(); ++l) {
      for (int64_t i = 0; i < forward_leaves[l].element_count(); ++i) {
        EXPECT_NEAR(gradient_leaves[l].GetAsDouble(i), forward_leaves[l].GetAsDouble(i),
                    1e-12 * (1.0 + std::fabs(forward_leaves[l].GetAsDouble(i))));
      }
    }
    for (size_t k = 0; k < wrt.size(); ++k) {
      const auto parameter = static_cast<size_t>(wrt[k]);
      const Literal& gradient = gradient_leaves[result_leaves.size() + k];
      ASSERT_TRUE(gradient.shape().Compatible(inputs[parameter].shape())) << gradient.shape().ToString();
      for (int64_t i = 0; i < gradient.element_count(); ++i) {
        std::vector<Literal> plus = inputs;
        std::vector<Literal> minus = inputs;
        plus[parameter].data<double>()[static_cast<size_t>(i)] += tolerance.step;
        minus[parameter].data<double>()[static_cast<size_t>(i)] -= tolerance.step;
        const double difference = (Project(RunLeaves(*forward_executable, *interpreter, plus), cotangents) -
                                   Project(RunLeaves(*forward_executable, *interpreter, minus), cotangents)) /
                                  (2.0 * tolerance.step);
        EXPECT_NEAR(gradient.GetAsDouble(i), difference, tolerance.relative * (1.0 + std::fabs(difference)))
            << "gradient of parameter " << parameter << " element " << i;
      }
    }
  }
}

}  // namespace kiln::testing
