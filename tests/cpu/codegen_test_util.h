// Shared by the code generator tests: compile a computation with the LLVM
// kernel compiler, run it over its parallel extent split into a few ranges,
// and compare with the reference interpreter.
#pragma once

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/codegen/kernel_compiler.h"
#include "core/hlo_parser.h"
#include "core/interpreter/interpreter_backend.h"
#include "core/literal.h"
#include "tests/unit/complex_parts.h"

namespace kiln::cpu::testing {

// One compiler for a whole test binary: creating the JIT costs milliseconds.
inline KernelCompiler& SharedCompiler() {
  static std::unique_ptr<KernelCompiler> compiler = [] {
    auto created = KernelCompiler::Create({});
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? std::move(*created) : nullptr;
  }();
  return *compiler;
}

// Runs `kernel` over [0, extent) as `pieces` disjoint ranges.
inline void RunInPieces(const KernelInfo& kernel, void* const* buffers, int pieces) {
  const int64_t extent = kernel.parallel_extent;
  for (int piece = 0; piece < pieces; ++piece) {
    const int64_t begin = extent * piece / pieces;
    const int64_t end = extent * (piece + 1) / pieces;
    if (begin < end) kernel.function(buffers, begin, end);
  }
}

inline StatusOr<std::shared_ptr<CompiledKernels>> CompileEntry(const Module& module) {
  KernelDescription request = DescribeKernel(*module.entry(), "test_kernel");
  return SharedCompiler().Compile(std::span<const KernelDescription>(&request, 1));
}

// Runs compiled kernel number `kernel`, built from the entry of `module`, on
// `arguments`.
inline std::vector<Literal> RunCompiled(const CompiledKernels& compiled, const Module& module,
                                        const std::vector<Literal>& arguments, int pieces,
                                        size_t kernel = 0) {
  std::vector<Literal> outputs;
  for (const Shape& leaf : module.entry()->root()->shape.Leaves()) outputs.emplace_back(leaf);
  std::vector<void*> buffers;
  for (const Literal& argument : arguments) buffers.push_back(const_cast<uint8_t*>(argument.raw().data()));
  for (Literal& output : outputs) buffers.push_back(output.raw().data());
  RunInPieces(compiled.kernels()[kernel], buffers.data(), pieces);
  return outputs;
}

// Compiles the entry of `module` as one kernel and runs it on `arguments`.
inline StatusOr<std::vector<Literal>> RunKernel(const Module& module, const std::vector<Literal>& arguments,
                                                int pieces = 3) {
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<CompiledKernels> compiled, CompileEntry(module));
  return RunCompiled(*compiled, module, arguments, pieces);
}

inline StatusOr<std::vector<Literal>> RunInterpreter(const Module& module,
                                                     const std::vector<Literal>& arguments) {
  interpreter::InterpreterBackend backend;
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Executable> executable, backend.Compile(module, CompileOptions{}));
  std::vector<std::unique_ptr<DeviceBuffer>> owned;
  std::vector<DeviceBuffer*> buffers;
  for (const Literal& argument : arguments) {
    KILN_ASSIGN_OR_RETURN(auto buffer, backend.BufferFromLiteral(argument, backend.devices()[0]));
    buffers.push_back(buffer.get());
    owned.push_back(std::move(buffer));
  }
  KILN_ASSIGN_OR_RETURN(auto results, executable->Execute(buffers, ExecuteOptions{}));
  std::vector<Literal> literals;
  for (auto& result : results) {
    KILN_ASSIGN_OR_RETURN(Literal literal, result->ToLiteral());
    literals.push_back(std::move(literal));
  }
  return literals;
}

// Relative tolerance for float results of each type (fast exp/tanh/... are
// a few ulp off libm; F16/BF16 results may differ by one rounding).
inline double Tolerance(ElementType type) {
  switch (type) {
    case ElementType::kF16: return 2e-3;
    case ElementType::kBF16: return 1.6e-2;
    case ElementType::kF32: return 2e-6;
    default: return 1e-12;
  }
}

// Integers and predicates must match bit for bit; floats within Tolerance
// relative, or within `absolute` (for sums, whose rounding error is relative
// to the sum of magnitudes, not to a result that cancellation made small).
inline void ExpectNear(const Literal& expected, const Literal& actual, const std::string& what,
                       double absolute = 0) {
  ASSERT_EQ(expected.shape().ToString(), actual.shape().ToString()) << what;
  const ElementType type = expected.shape().element_type();
  if (IsComplex(type)) {
    // Part by part, each like a real result of the part's type.
    for (bool real : {true, false}) {
      const Literal e = kiln::testing::ComplexParts(expected, real);
      const Literal a = kiln::testing::ComplexParts(actual, real);
      ExpectNear(e, a, what + (real ? " (real parts)" : " (imaginary parts)"), absolute);
    }
    return;
  }
  if (!IsFloating(type)) {
    EXPECT_TRUE(expected == actual) << what << "\nexpected " << expected.ToString() << "\nactual   "
                                    << actual.ToString();
    return;
  }
  const double tolerance = Tolerance(type);
  int failures = 0;
  for (int64_t i = 0; i < expected.element_count() && failures < 5; ++i) {
    const double e = expected.GetAsDouble(i);
    const double a = actual.GetAsDouble(i);
    if (std::isnan(e) || std::isnan(a)) {
      if (std::isnan(e) != std::isnan(a)) {
        ADD_FAILURE() << what << " element " << i << ": expected " << e << ", got " << a;
        ++failures;
      }
      continue;
    }
    if (e == a) continue;
    const double bound = std::max(
        tolerance * std::max(std::fabs(e), 1e-30) + (type == ElementType::kF64 ? 0 : 1e-37), absolute);
    if (!(std::fabs(e - a) <= bound)) {
      ADD_FAILURE() << what << " element " << i << ": expected " << e << ", got " << a;
      ++failures;
    }
  }
}

// Deterministic inputs of any array type, with the edge values of the type
// (zero, -1, extremes, NaN, inf, ...) mixed in.
inline Literal MakeInput(const Shape& shape, uint64_t seed, double low = -4.0, double high = 4.0) {
  Literal literal(shape);
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&]() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  DispatchElementType(shape.element_type(), [&](auto tag) {
    using T = decltype(tag);
    auto data = literal.data<T>();
    for (size_t i = 0; i < data.size(); ++i) {
      const uint64_t r = next();
      if constexpr (std::is_same_v<T, bool>) {
        data[i] = (r & 1) != 0;
      } else if constexpr (std::is_integral_v<T>) {
        static const T kEdges[] = {
            T(0), T(1), static_cast<T>(-1), std::numeric_limits<T>::min(), std::numeric_limits<T>::max(),
            T(2), T(7)};
        data[i] =
            (r % 5 == 0) ? kEdges[(r >> 8) % 7] : static_cast<T>(static_cast<int64_t>(r >> 3) % 201 - 100);
      } else if constexpr (convert_detail::IsComplexT<T>::value) {
        using R = typename T::value_type;
        const double real = static_cast<double>(r >> 11) / 9007199254740992.0;
        const double imag = static_cast<double>(next() >> 11) / 9007199254740992.0;
        data[i] = T(static_cast<R>(low + (high - low) * real), static_cast<R>(low + (high - low) * imag));
      } else {
        const double unit = static_cast<double>(r >> 11) / 9007199254740992.0;
        data[i] = static_cast<T>(low + (high - low) * unit);
      }
    }
    return 0;
  });
  return literal;
}

// Adds float edge values (NaN, +-inf, +-0, huge) at the start of a float array.
inline void AddFloatEdges(Literal& literal) {
  const ElementType type = literal.shape().element_type();
  if (!IsFloating(type)) return;
  const double edges[] = {std::nan(""), INFINITY, -INFINITY, 0.0, -0.0, 1e30, -1e30, 0.5, -0.5, 2.5, 1e-40};
  DispatchElementType(type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_integral_v<T> && !convert_detail::IsComplexT<T>::value) {
      auto data = literal.data<T>();
      for (size_t i = 0; i < data.size() && i < std::size(edges); ++i) data[i] = static_cast<T>(edges[i]);
    }
    return 0;
  });
}

// Softmax over the last axis of type[rows, columns], as JAX writes it:
// reduce max, subtract, exp, reduce sum, divide.
inline std::string Softmax(const std::string& type, int64_t rows, int64_t columns) {
  const std::string row = type + "[" + std::to_string(rows) + "]";
  const std::string all = type + "[" + std::to_string(rows) + "," + std::to_string(columns) + "]";
  return "HloModule softmax\n"
         "max_of {\n  a = " +
         type + "[] parameter(0)\n  b = " + type +
         "[] parameter(1)\n"
         "  ROOT m = " +
         type +
         "[] maximum(a, b)\n}\n"
         "add {\n  a = " +
         type + "[] parameter(0)\n  b = " + type +
         "[] parameter(1)\n"
         "  ROOT s = " +
         type +
         "[] add(a, b)\n}\n"
         "ENTRY main {\n  x = " +
         all +
         " parameter(0)\n"
         "  low = " +
         type + "[] constant(-inf)\n  zero = " + type +
         "[] constant(0)\n"
         "  max = " +
         row +
         " reduce(x, low), dimensions={1}, to_apply=max_of\n"
         "  maxb = " +
         all +
         " broadcast(max), dimensions={0}\n"
         "  shifted = " +
         all +
         " subtract(x, maxb)\n"
         "  e = " +
         all +
         " exponential(shifted)\n"
         "  sum = " +
         row +
         " reduce(e, zero), dimensions={1}, to_apply=add\n"
         "  sumb = " +
         all +
         " broadcast(sum), dimensions={0}\n"
         "  ROOT out = " +
         all + " divide(e, sumb)\n}\n";
}

// Parses `hlo`, runs it both ways and compares every output.
inline void CompareWithInterpreter(const std::string& hlo, const std::vector<Literal>& arguments,
                                   const std::string& what, double absolute = 0) {
  auto module = ParseHloModule(hlo);
  ASSERT_TRUE(module.ok()) << module.status().ToString() << "\n" << hlo;
  auto expected = RunInterpreter(**module, arguments);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  auto compiled = CompileEntry(**module);
  ASSERT_TRUE(compiled.ok()) << what << ": " << compiled.status().ToString() << "\n" << hlo;
  for (int pieces : {1, 3}) {
    std::vector<Literal> actual = RunCompiled(**compiled, **module, arguments, pieces);
    ASSERT_EQ(expected->size(), actual.size());
    for (size_t i = 0; i < expected->size(); ++i) {
      ExpectNear((*expected)[i], actual[i],
                 what + " output " + std::to_string(i) + " pieces " + std::to_string(pieces), absolute);
    }
  }
}

// CompareWithInterpreter for an ENTRY of two parameters: `body` holds its
// instructions (parameters 0 and 1 of shapes `lhs` and `rhs` included); the
// inputs come from MakeInput with seeds `seed` and `seed + 1`.
inline void CompareTwoInputEntry(const std::string& body, const std::string& what, const Shape& lhs,
                                 const Shape& rhs, uint64_t seed, double absolute = 0, double low = -4.0,
                                 double high = 4.0) {
  CompareWithInterpreter("HloModule m\nENTRY e {\n" + body + "}\n",
                         {MakeInput(lhs, seed, low, high), MakeInput(rhs, seed + 1, low, high)}, what,
                         absolute);
}

}  // namespace kiln::cpu::testing
