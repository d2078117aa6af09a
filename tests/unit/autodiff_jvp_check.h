// The checker of the forward-mode tests: builds a module's JVP
// (core/autodiff/jvp.h), runs it on the interpreter and on cpu with random
// tangents, and compares
//  - the primal results with the forward module's,
//  - each result tangent with f64 central differences of the forward module
//    along the same tangents, and
//  - <w, J v> with <J^T w, v> from the reverse mode (core/autodiff/vjp.h)
//    of the same module under random cotangents w, where it has one.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "core/autodiff/jvp.h"
#include "tests/unit/autodiff_gradient_check.h"

namespace kiln::testing {

struct JvpTolerance {
  double step = 1e-5;
  double relative = 1e-6;
  bool against_vjp = true;  // false where reverse mode has no rule for an op
};

// Sum over the f64 leaves of <a, b>.
inline double DotF64(const std::vector<Literal>& a, const std::vector<Literal>& b) {
  double sum = 0.0;
  for (size_t l = 0; l < a.size() && l < b.size(); ++l) {
    if (a[l].shape().element_type() != ElementType::kF64) continue;
    for (int64_t i = 0; i < a[l].element_count(); ++i) sum += a[l].GetAsDouble(i) * b[l].GetAsDouble(i);
  }
  return sum;
}

inline void ExpectJvpMatches(const Module& forward, std::vector<int64_t> wrt, std::vector<Literal> inputs,
                             uint32_t seed = 1, JvpTolerance tolerance = {}) {
  SCOPED_TRACE(forward.ToString());
  StatusOr<std::unique_ptr<Module>> jvp = autodiff::BuildJvp(forward, wrt);
  ASSERT_TRUE(jvp.ok()) << jvp.status().ToString();
  std::mt19937 random(seed);
  std::vector<Literal> tangents;
  std::vector<Literal> jvp_inputs = inputs;
  for (int64_t number : wrt) {
    tangents.push_back(RandomF64(inputs[static_cast<size_t>(number)].shape(), random));
    jvp_inputs.push_back(tangents.back());
  }
  const std::vector<Shape> result_leaves = forward.entry()->root()->shape.Leaves();
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> interpreter, CreateBackend("interpreter"));
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> forward_executable,
                            interpreter->Compile(forward, CompileOptions{}));
  const std::vector<Literal> forward_leaves = RunLeaves(*forward_executable, *interpreter, inputs);
  ASSERT_EQ(forward_leaves.size(), result_leaves.size());

  // Central differences of every result element along the tangents.
  auto moved = [&](double sign) {
    std::vector<Literal> shifted = inputs;
    for (size_t k = 0; k < wrt.size(); ++k) {
      Literal& input = shifted[static_cast<size_t>(wrt[k])];
      for (int64_t i = 0; i < input.element_count(); ++i) {
        input.data<double>()[static_cast<size_t>(i)] += sign * tolerance.step * tangents[k].GetAsDouble(i);
      }
    }
    return RunLeaves(*forward_executable, *interpreter, shifted);
  };
  const std::vector<Literal> plus = moved(1.0);
  const std::vector<Literal> minus = moved(-1.0);

  // Reverse mode under random cotangents (1 for a scalar loss).
  std::unique_ptr<Module> vjp;
  std::vector<Literal> cotangents;
  std::vector<Literal> vjp_inputs = inputs;
  if (tolerance.against_vjp) {
    KILN_ASSERT_OK_AND_ASSIGN(vjp, autodiff::BuildVjp(forward, wrt));
    if (forward.entry()->root()->shape.IsScalar()) {
      cotangents.push_back(Literal::Scalar<double>(1.0));
    } else {
      for (const Shape& leaf : result_leaves) {
        cotangents.push_back(leaf.element_type() == ElementType::kF64 ? RandomF64(leaf, random)
                                                                      : Literal(leaf));
        vjp_inputs.push_back(cotangents.back());
      }
    }
  }

  for (const char* backend_name : {"interpreter", "cpu"}) {
    SCOPED_TRACE(backend_name);
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> backend, CreateBackend(backend_name));
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable,
                              backend->Compile(**jvp, CompileOptions{}));
    const std::vector<Literal> got = RunLeaves(*executable, *backend, jvp_inputs);
    ASSERT_EQ(got.size(), 2 * result_leaves.size());
    std::vector<Literal> result_tangents;
    for (size_t l = 0; l < result_leaves.size(); ++l) {
      const Literal& primal = got[l];
      const Literal& tangent = got[result_leaves.size() + l];
      ASSERT_TRUE(tangent.shape().Compatible(result_leaves[l])) << tangent.shape().ToString();
      for (int64_t i = 0; i < primal.element_count(); ++i) {
        EXPECT_NEAR(primal.GetAsDouble(i), forward_leaves[l].GetAsDouble(i),
                    1e-12 * (1.0 + std::fabs(forward_leaves[l].GetAsDouble(i))))
            << "result leaf " << l << " element " << i;
      }
      const bool is_f64 = result_leaves[l].element_type() == ElementType::kF64;
      for (int64_t i = 0; i < tangent.element_count(); ++i) {
        // Integer and predicate results have no tangent: zeros.
        const double want =
            is_f64 ? (plus[l].GetAsDouble(i) - minus[l].GetAsDouble(i)) / (2.0 * tolerance.step) : 0.0;
        EXPECT_NEAR(tangent.GetAsDouble(i), want, tolerance.relative * (1.0 + std::fabs(want)))
            << "tangent of result leaf " << l << " element " << i;
      }
      result_tangents.push_back(tangent);
    }
    if (!tolerance.against_vjp) continue;
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> reverse, backend->Compile(*vjp, CompileOptions{}));
    const std::vector<Literal> pulled = RunLeaves(*reverse, *backend, vjp_inputs);
    ASSERT_EQ(pulled.size(), result_leaves.size() + wrt.size());
    const double forward_side = DotF64(cotangents, result_tangents);
    double reverse_side = 0.0;
    for (size_t k = 0; k < wrt.size(); ++k) {
      reverse_side += DotF64({pulled[result_leaves.size() + k]}, {tangents[k]});
    }
    EXPECT_NEAR(forward_side, reverse_side, 1e-9 * (1.0 + std::fabs(reverse_side)))
        << "<w, J v> vs <J^T w, v>";
  }
}

}  // namespace kiln::testing
