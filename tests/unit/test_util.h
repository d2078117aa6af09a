// Small shared helpers for unit tests: build with a Builder, compile on a
// named backend, run with literal arguments, compare literals with a
// tolerance. Keep this tiny and stable; other tests include it.
#pragma once

#include <cmath>
#include <complex>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "core/backend.h"
#include "core/builder.h"
#include "core/hlo_parser.h"
#include "core/literal.h"
#include "core/status.h"

// Fails the test (fatally) when `expr` is not OK, printing the status.
#define KILN_ASSERT_OK(expr)                                                 \
  do {                                                                       \
    const ::kiln::Status kiln_assert_status_ = (expr);                       \
    ASSERT_TRUE(kiln_assert_status_.ok()) << kiln_assert_status_.ToString(); \
  } while (0)

// `KILN_ASSERT_OK_AND_ASSIGN(auto x, StatusOrExpr)` unwraps or fails the test.
#define KILN_ASSERT_OK_AND_ASSIGN(lhs, expr) \
  KILN_ASSERT_OK_AND_ASSIGN_IMPL(KILN_CONCAT(kiln_assert_statusor_, __LINE__), lhs, expr)
#define KILN_ASSERT_OK_AND_ASSIGN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  ASSERT_TRUE(tmp.ok()) << tmp.status().ToString();    \
  lhs = std::move(tmp).value()

namespace kiln::testing {

// Rebuilds a (possibly nested) tuple literal of `shape` from its leaves,
// consuming them from `next` on.
inline Literal AssembleLeaves(const Shape& shape, std::vector<Literal>& leaves, size_t& next) {
  if (!shape.IsTuple()) return next < leaves.size() ? std::move(leaves[next++]) : Literal(shape);
  std::vector<Literal> elements;
  for (const Shape& element : shape.tuple_shapes()) elements.push_back(AssembleLeaves(element, leaves, next));
  return Literal::Tuple(std::move(elements));
}

// Compiles `module` on `backend` and runs it once; `arguments` bind the
// entry's parameters in order (tuple arguments are flattened into leaves).
// Returns the result leaves.
inline StatusOr<std::vector<Literal>> ExecuteLeaves(Backend& backend, const Module& module,
                                                    std::span<const Literal> arguments,
                                                    const ExecuteOptions& options = {}) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Executable> executable, backend.Compile(module, CompileOptions{}));
  if (backend.devices().empty()) return FailedPrecondition("backend ", backend.name(), " has no device");
  Device* device = backend.devices()[0];
  std::vector<std::unique_ptr<DeviceBuffer>> owned;
  std::vector<DeviceBuffer*> buffers;
  for (const Literal& argument : arguments) {
    for (const Literal& leaf : argument.Leaves()) {
      KILN_ASSIGN_OR_RETURN(std::unique_ptr<DeviceBuffer> buffer, backend.BufferFromLiteral(leaf, device));
      buffers.push_back(buffer.get());
      owned.push_back(std::move(buffer));
    }
  }
  KILN_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<DeviceBuffer>> results,
                        executable->Execute(buffers, options));
  std::vector<Literal> leaves;
  for (const auto& result : results) {
    KILN_ASSIGN_OR_RETURN(Literal leaf, result->ToLiteral());
    leaves.push_back(std::move(leaf));
  }
  return leaves;
}

// As ExecuteLeaves, but returns one literal shaped like the entry's result
// (a tuple literal for a tuple result).
inline StatusOr<Literal> Execute(Backend& backend, const Module& module, std::span<const Literal> arguments,
                                 const ExecuteOptions& options = {}) {
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> leaves, ExecuteLeaves(backend, module, arguments, options));
  if (module.entry() == nullptr || module.entry()->root() == nullptr) {
    return InvalidArgument("module ", module.name(), " has no entry root");
  }
  const Shape& result_shape = module.entry()->root()->shape;
  if (static_cast<size_t>(result_shape.Leaves().size()) != leaves.size()) {
    return Internal("backend ", backend.name(), " returned ", leaves.size(), " leaves for result ",
                    result_shape.ToString());
  }
  size_t next = 0;
  return AssembleLeaves(result_shape, leaves, next);
}

// Runs `original` and `rewritten` (a pass's output) on the interpreter with
// the same arguments and expects the same leaves, within 1e-5 relative.
inline void ExpectSameResults(const Module& original, const Module& rewritten,
                              std::span<const Literal> arguments) {
  StatusOr<std::unique_ptr<Backend>> backend = CreateBackend("interpreter");
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  auto expected = ExecuteLeaves(**backend, original, arguments);
  auto actual = ExecuteLeaves(**backend, rewritten, arguments);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  ASSERT_TRUE(actual.ok()) << actual.status().ToString();
  ASSERT_EQ(actual->size(), expected->size());
  for (size_t leaf = 0; leaf < expected->size(); ++leaf) {
    const Literal& want = (*expected)[leaf];
    const Literal& got = (*actual)[leaf];
    ASSERT_EQ(got.shape(), want.shape()) << "leaf " << leaf;
    for (int64_t i = 0; i < want.element_count(); ++i) {
      EXPECT_NEAR(got.GetAsDouble(i), want.GetAsDouble(i), 1e-5 + 1e-5 * std::fabs(want.GetAsDouble(i)))
          << "leaf " << leaf << " element " << i;
    }
  }
}

// Creates backend `backend_name` and runs `module` on it.
inline StatusOr<Literal> Run(const Module& module, std::span<const Literal> arguments = {},
                             std::string_view backend_name = "interpreter",
                             const ExecuteOptions& options = {}) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, CreateBackend(backend_name));
  return Execute(*backend, module, arguments, options);
}

// Builds `builder`'s computation (rooted at its last op) and runs it.
inline StatusOr<Literal> BuildAndRun(Builder& builder, std::span<const Literal> arguments = {},
                                     std::string_view backend_name = "interpreter",
                                     const ExecuteOptions& options = {}) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, builder.Build());
  return Run(*module, arguments, backend_name, options);
}

// Builds a computation of two scalar parameters of `type` combined by `opcode`
// (add, max, ...), for reduce/map/scatter to_apply computations.
inline StatusOr<std::unique_ptr<Module>> ScalarBinaryComputation(Opcode opcode, ElementType type,
                                                                 const std::string& name) {
  Builder builder(name);
  Op lhs = builder.Parameter(0, Shape::Scalar(type), "lhs");
  Op rhs = builder.Parameter(1, Shape::Scalar(type), "rhs");
  builder.BinaryOp(opcode, lhs, rhs);
  return builder.Build();
}

namespace internal {

inline bool ValuesNear(double expected, double actual, double tolerance) {
  if (std::isnan(expected) || std::isnan(actual)) return std::isnan(expected) && std::isnan(actual);
  if (expected == actual) return true;  // covers equal infinities
  return std::fabs(expected - actual) <= tolerance * (1.0 + std::fabs(expected));
}

}  // namespace internal

// Equal shapes (layouts ignored) and every element within `tolerance`,
// relative to max(1, |expected|). NaN matches NaN. tolerance 0 = exact.
inline ::testing::AssertionResult LiteralNear(const Literal& expected, const Literal& actual,
                                              double tolerance = 0.0) {
  if (!expected.shape().Compatible(actual.shape())) {
    return ::testing::AssertionFailure()
           << "shape mismatch: expected " << expected.shape().ToString() << ", got "
           << actual.shape().ToString() << " = " << actual.ToString();
  }
  if (expected.shape().IsTuple()) {
    for (size_t i = 0; i < expected.tuple_elements().size(); ++i) {
      auto element = LiteralNear(expected.tuple_elements()[i], actual.tuple_elements()[i], tolerance);
      if (!element)
        return ::testing::AssertionFailure() << "tuple element " << i << ": " << element.message();
    }
    return ::testing::AssertionSuccess();
  }
  if (!expected.shape().IsArray()) return ::testing::AssertionSuccess();
  const int64_t count = expected.element_count();
  for (int64_t i = 0; i < count; ++i) {
    bool near = true;
    DispatchElementType(expected.shape().element_type(), [&](auto tag) {
      using T = decltype(tag);
      const T e = expected.data<T>()[static_cast<size_t>(i)];
      const T a = actual.data<T>()[static_cast<size_t>(i)];
      if constexpr (convert_detail::IsComplexT<T>::value) {
        near = internal::ValuesNear(e.real(), a.real(), tolerance) &&
               internal::ValuesNear(e.imag(), a.imag(), tolerance);
      } else if constexpr (std::is_integral_v<T>) {
        near = e == a;
      } else {
        near = internal::ValuesNear(static_cast<double>(e), static_cast<double>(a), tolerance);
      }
    });
    if (!near) {
      return ::testing::AssertionFailure() << "element " << i << " (row-major) differs: expected "
                                           << expected.ToString() << ", got " << actual.ToString();
    }
  }
  return ::testing::AssertionSuccess();
}

// Builds `builder`'s computation, runs it on the interpreter with `arguments`
// and compares the result with `expected`. Usage:
//   EXPECT_TRUE(RunsTo(builder, expected));
inline ::testing::AssertionResult RunsTo(Builder& builder, const Literal& expected,
                                         std::span<const Literal> arguments = {}, double tolerance = 0.0) {
  StatusOr<Literal> result = BuildAndRun(builder, arguments);
  if (!result.ok()) return ::testing::AssertionFailure() << "run failed: " << result.status().ToString();
  return LiteralNear(expected, *result, tolerance);
}

// The module HLO `text` parses to; on a parse error, a (non-fatal) test
// failure naming the error and the text, and nullptr.
inline std::unique_ptr<Module> ParseHloOrFail(const std::string& text) {
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString() << "\n" << text;
  return module.ok() ? std::move(module).value() : nullptr;
}

}  // namespace kiln::testing
