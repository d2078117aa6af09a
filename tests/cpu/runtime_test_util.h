// Helpers for the CPU runtime tests: parse HLO text, make deterministic
// pseudo-random arguments, run on a backend, and compare the CPU backend with
// the reference interpreter.
#pragma once

#include <cmath>
#include <complex>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/cpu_executable.h"
#include "core/hlo_parser.h"
#include "core/interpreter/interpreter_backend.h"
#include "tests/unit/test_util.h"

namespace kiln::cpu::testing {

inline std::unique_ptr<Module> ParseOrDie(const std::string& text) {
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

// Compiles `text` on the CPU backend and counts the thunks of `kind` it
// made ("scan", "transpose", ...); -1 when it does not compile.
inline int64_t CountThunks(const std::string& text, const std::string& kind) {
  std::unique_ptr<Module> module = ParseOrDie(text);
  EXPECT_NE(module, nullptr);
  if (module == nullptr) return -1;
  CpuBackend cpu;
  StatusOr<std::unique_ptr<Executable>> executable = cpu.Compile(*module, CompileOptions());
  EXPECT_TRUE(executable.ok()) << executable.status().ToString();
  if (!executable.ok()) return -1;
  const auto& thunks = static_cast<const CpuExecutable&>(**executable).program().statistics.thunks;
  const auto found = thunks.find(kind);
  return found == thunks.end() ? 0 : static_cast<int64_t>(found->second);
}

// Small values of each leaf's type, different for every leaf and seed.
inline std::vector<Literal> RandomArguments(const Module& module, uint64_t seed = 1) {
  std::vector<Literal> arguments;
  uint64_t state = seed * 0x9e3779b97f4a7c15ULL + 7;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>((state >> 33) % 2001) / 1000.0 - 1.0;  // [-1, 1]
  };
  for (const Instruction* parameter : module.entry()->parameters()) {
    std::vector<Literal> leaves;
    for (const Shape& leaf : parameter->shape.Leaves()) {
      Literal literal(leaf);
      if (leaf.IsArray()) {
        DispatchElementType(leaf.element_type(), [&](auto tag) {
          using T = decltype(tag);
          for (T& value : literal.data<T>()) {
            if constexpr (std::is_same_v<T, bool>) {
              value = next() > 0;
            } else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
              using R = typename T::value_type;
              value = T(static_cast<R>(next()), static_cast<R>(next()));
            } else if constexpr (std::is_integral_v<T>) {
              value = static_cast<T>(std::fabs(next()) * 5);
            } else {
              value = static_cast<T>(static_cast<float>(next()));
            }
          }
        });
      }
      leaves.push_back(std::move(literal));
    }
    if (parameter->shape.IsTuple()) {
      size_t next_leaf = 0;
      arguments.push_back(kiln::testing::AssembleLeaves(parameter->shape, leaves, next_leaf));
    } else {
      arguments.push_back(std::move(leaves[0]));
    }
  }
  return arguments;
}

inline StatusOr<std::vector<Literal>> RunOn(Backend& backend, const Module& module,
                                            const std::vector<Literal>& arguments) {
  return kiln::testing::ExecuteLeaves(backend, module, arguments);
}

inline double AbsDifference(const Literal& a, const Literal& b, int64_t i) {
  double difference = 0;
  DispatchElementType(a.shape().element_type(), [&](auto tag) {
    using T = decltype(tag);
    const T x = a.data<T>()[static_cast<size_t>(i)];
    const T y = b.data<T>()[static_cast<size_t>(i)];
    if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
      difference = std::abs(std::complex<double>(x) - std::complex<double>(y));
    } else if constexpr (std::is_same_v<T, bool>) {
      difference = x == y ? 0 : 1;
    } else {
      difference = std::fabs(static_cast<double>(x) - static_cast<double>(y));
    }
  });
  return difference;
}

// Runs `text` on the CPU backend and on the interpreter with the same
// arguments and expects every result element within `tolerance`.
inline void ExpectMatchesInterpreter(const std::string& text, double tolerance = 1e-4, uint64_t seed = 1) {
  std::unique_ptr<Module> module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  const std::vector<Literal> arguments = RandomArguments(*module, seed);
  CpuBackend cpu;
  interpreter::InterpreterBackend reference;
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> got, RunOn(cpu, *module, arguments));
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, RunOn(reference, *module, arguments));
  ASSERT_EQ(got.size(), want.size());
  for (size_t r = 0; r < got.size(); ++r) {
    ASSERT_TRUE(got[r].shape().Compatible(want[r].shape()))
        << got[r].shape().ToString() << " vs " << want[r].shape().ToString();
    for (int64_t i = 0; i < want[r].element_count(); ++i) {
      ASSERT_LE(AbsDifference(got[r], want[r], i), tolerance) << "result " << r << " element " << i;
    }
  }
}

// Runs `executable`, compiled by `cpu`, once on `arguments` (arrays) with
// `options`; its result leaves.
inline StatusOr<std::vector<Literal>> RunExecutable(CpuBackend& cpu, Executable& executable,
                                                    const std::vector<Literal>& arguments,
                                                    const ExecuteOptions& options = {}) {
  std::vector<std::unique_ptr<DeviceBuffer>> owned;
  std::vector<DeviceBuffer*> buffers;
  for (const Literal& argument : arguments) {
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<DeviceBuffer> buffer, cpu.BufferFromLiteral(argument, nullptr));
    buffers.push_back(buffer.get());
    owned.push_back(std::move(buffer));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<DeviceBuffer>> results,
                        executable.Execute(buffers, options));
  std::vector<Literal> literals;
  for (const auto& result : results) {
    KILN_ASSIGN_OR_RETURN(Literal literal, result->ToLiteral());
    literals.push_back(std::move(literal));
  }
  return literals;
}

// Runs `module` on a CPU backend with `threads` intra-op threads; the one
// result (array) of the entry.
inline StatusOr<Literal> RunWithThreads(const Module& module, const std::vector<Literal>& arguments,
                                        int threads) {
  CpuBackend cpu;
  CompileOptions options;
  options.num_threads = threads;
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Executable> executable, cpu.Compile(module, options));
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> results, RunExecutable(cpu, *executable, arguments));
  if (results.size() != 1) return Internal("expected one result, got ", results.size());
  return std::move(results[0]);
}

// As ExpectMatchesInterpreter for a module of one array result, on CPU
// backends of each of `thread_counts` intra-op threads.
inline void ExpectMatchesInterpreterOnThreads(const Module& module, std::initializer_list<int> thread_counts,
                                              double tolerance) {
  const std::vector<Literal> arguments = RandomArguments(module);
  interpreter::InterpreterBackend reference;
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, RunOn(reference, module, arguments));
  ASSERT_EQ(want.size(), 1u);
  for (int threads : thread_counts) {
    KILN_ASSERT_OK_AND_ASSIGN(Literal got, RunWithThreads(module, arguments, threads));
    ASSERT_TRUE(got.shape().Compatible(want[0].shape()));
    for (int64_t i = 0; i < want[0].element_count(); ++i) {
      ASSERT_LE(AbsDifference(got, want[0], i), tolerance) << threads << " threads, element " << i;
    }
  }
}

// The element where `got` and `want` differ in their bytes, or -1; with
// `any_nan_payload`, two float NaNs of any payload and sign count as equal
// (for sums and products, whose NaN payload neither XLA nor the
// interpreter fixes).
inline int64_t FirstByteDifference(const Literal& got, const Literal& want, bool any_nan_payload = false) {
  const int64_t width = ByteWidth(want.shape().element_type());
  for (int64_t i = 0; i < want.element_count(); ++i) {
    if (!std::memcmp(got.raw().data() + i * width, want.raw().data() + i * width, static_cast<size_t>(width)))
      continue;
    bool both_nan = false;
    if (any_nan_payload) {
      DispatchElementType(want.shape().element_type(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_floating_point_v<T>) {
          both_nan = std::isnan(got.data<T>()[static_cast<size_t>(i)]) &&
                     std::isnan(want.data<T>()[static_cast<size_t>(i)]);
        }
      });
    }
    if (!both_nan) return i;
  }
  return -1;
}

// Runs `module` (one array result) on the interpreter and on CPU backends
// of 1, 2 and 4 intra-op threads and expects the same bytes: NaNs,
// infinities and signed zeros included (NaN payloads aside with
// `any_nan_payload`).
inline void ExpectSameBytesOnThreads(const Module& module, const std::vector<Literal>& arguments,
                                     bool any_nan_payload = false) {
  interpreter::InterpreterBackend reference;
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, RunOn(reference, module, arguments));
  ASSERT_EQ(want.size(), 1u);
  for (int threads : {1, 2, 4}) {
    KILN_ASSERT_OK_AND_ASSIGN(Literal got, RunWithThreads(module, arguments, threads));
    ASSERT_TRUE(got.shape().Compatible(want[0].shape()));
    const int64_t at = FirstByteDifference(got, want[0], any_nan_payload);
    EXPECT_EQ(at, -1) << threads << " threads: element " << at << " differs";
  }
}

}  // namespace kiln::cpu::testing
