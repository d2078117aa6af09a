// The safety net of the optimisation pipeline: every program of the
// conformance corpus, optimised, gives the interpreter the same results as
// the original for the stored inputs (within the conformance tolerances).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/interpreter/interpreter_backend.h"
#include "core/npy.h"
#include "core/passes/pipeline.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

fs::path CorpusDir() {
#ifdef KILN_SOURCE_DIR
  return fs::path(KILN_SOURCE_DIR) / "tests" / "conformance" / "corpus";
#else
  // This file is tests/unit/passes_corpus_test.cc of the source tree.
  return fs::path(__FILE__).parent_path().parent_path() / "conformance" / "corpus";
#endif
}

std::vector<std::string> ProgramNames() {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(CorpusDir(), error)) {
    if (fs::exists(entry.path() / "module.hlo")) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

struct Tolerance {
  double rtol = 0;
  double atol = 0;
};

Tolerance ToleranceFor(ElementType type) {
  switch (type) {
    case ElementType::kF16: return {1e-2, 1e-2};
    case ElementType::kBF16: return {2e-2, 2e-2};
    case ElementType::kF32:
    case ElementType::kC64: return {1e-4, 1e-5};
    case ElementType::kF64:
    case ElementType::kC128: return {1e-9, 1e-12};
    default: return {0, 0};
  }
}

// The loosest float tolerance of any type the module computes in.
Tolerance ModuleTolerance(const Module& module) {
  Tolerance loosest;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      for (const Shape& leaf : instruction->shape.Leaves()) {
        const Tolerance t = ToleranceFor(leaf.element_type());
        loosest.rtol = std::max(loosest.rtol, t.rtol);
        loosest.atol = std::max(loosest.atol, t.atol);
      }
    }
  }
  return loosest;
}

// Empty when equal within tolerance, else the first difference.
std::string Difference(const Literal& actual, const Literal& expected, Tolerance module_tolerance) {
  if (!actual.shape().Compatible(expected.shape())) {
    return "shape " + actual.shape().ToString() + " vs " + expected.shape().ToString();
  }
  Tolerance tol = ToleranceFor(expected.shape().element_type());
  if (tol.rtol == 0) {
    return actual == expected ? "" : "integer or pred values differ: " + actual.ToString();
  }
  tol.rtol = std::max(tol.rtol, module_tolerance.rtol);
  tol.atol = std::max(tol.atol, module_tolerance.atol);
  auto close = [&](double a, double e) {
    if (std::isnan(e)) return std::isnan(a);
    if (std::isinf(e)) return a == e;
    return std::fabs(a - e) <= tol.atol + tol.rtol * std::fabs(e);
  };
  std::string difference;
  DispatchElementType(expected.shape().element_type(), [&](auto tag) {
    using T = decltype(tag);
    const auto got = actual.data<T>();
    const auto want = expected.data<T>();
    for (size_t i = 0; i < want.size() && difference.empty(); ++i) {
      double got_real, want_real, got_imag = 0, want_imag = 0;
      if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
        got_real = got[i].real(), got_imag = got[i].imag();
        want_real = want[i].real(), want_imag = want[i].imag();
      } else {
        got_real = static_cast<double>(static_cast<float>(got[i]));
        want_real = static_cast<double>(static_cast<float>(want[i]));
        if constexpr (std::is_same_v<T, double>) got_real = got[i], want_real = want[i];
      }
      if (!close(got_real, want_real) || !close(got_imag, want_imag)) {
        difference = "element " + std::to_string(i) + ": " + std::to_string(got_real) + " vs " +
                     std::to_string(want_real);
      }
    }
  });
  return difference;
}

StatusOr<std::string> ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot open ", path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

StatusOr<std::vector<Literal>> RunOnInterpreter(interpreter::InterpreterBackend& backend,
                                                const Module& module, const std::vector<Literal>& leaves) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Executable> executable, backend.Compile(module, CompileOptions{}));
  std::vector<std::unique_ptr<DeviceBuffer>> owned;
  std::vector<DeviceBuffer*> arguments;
  for (const Literal& leaf : leaves) {
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<DeviceBuffer> buffer,
                          backend.BufferFromLiteral(leaf, backend.devices()[0]));
    arguments.push_back(buffer.get());
    owned.push_back(std::move(buffer));
  }
  KILN_ASSIGN_OR_RETURN(auto results, executable->Execute(arguments, ExecuteOptions{}));
  std::vector<Literal> literals;
  for (const auto& result : results) {
    KILN_ASSIGN_OR_RETURN(Literal literal, result->ToLiteral());
    literals.push_back(std::move(literal));
  }
  return literals;
}

class PassesCorpusTest : public ::testing::TestWithParam<std::string> {};

TEST(PassesCorpusListTest, CorpusIsFound) { EXPECT_GE(ProgramNames().size(), 100u) << CorpusDir(); }

TEST_P(PassesCorpusTest, OptimisedModuleGivesTheOriginalResults) {
  const fs::path dir = CorpusDir() / GetParam();
  KILN_ASSERT_OK_AND_ASSIGN(std::string text, ReadText(dir / "module.hlo"));
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> original, ParseHloModule(text));
  std::unique_ptr<Module> optimised = original->Clone();
  KILN_ASSERT_OK(RunOptimizationPipeline(*optimised));

  std::vector<Shape> parameter_leaves;
  for (const Instruction* parameter : original->entry()->parameters()) {
    for (const Shape& leaf : parameter->shape.Leaves()) parameter_leaves.push_back(leaf);
  }
  std::vector<Literal> inputs;
  for (size_t i = 0; i < parameter_leaves.size(); ++i) {
    KILN_ASSERT_OK_AND_ASSIGN(Literal input, ReadNpyFile((dir / ("in" + std::to_string(i) + ".npy")).string(),
                                                         parameter_leaves[i].element_type()));
    inputs.push_back(std::move(input));
  }
  interpreter::InterpreterBackend backend;
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> expected, RunOnInterpreter(backend, *original, inputs));
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> actual, RunOnInterpreter(backend, *optimised, inputs));
  ASSERT_EQ(actual.size(), expected.size());
  const Tolerance tolerance = ModuleTolerance(*original);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(Difference(actual[i], expected[i], tolerance), "") << "result " << i << "\n"
                                                                 << optimised->ToString();
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, PassesCorpusTest, ::testing::ValuesIn(ProgramNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace kiln
