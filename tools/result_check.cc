#include "tools/result_check.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/literal_compare.h"
#include "core/npy.h"
#include "core/reducer.h"

namespace kiln::tool {
namespace {

namespace fs = std::filesystem;

// The file of expected leaf `index`, or nullopt when there is none.
std::optional<fs::path> ExpectedFile(const fs::path& directory, size_t index) {
  std::error_code error;
  for (const std::string& name : {std::to_string(index) + ".npy", "out" + std::to_string(index) + ".npy"}) {
    if (fs::is_regular_file(directory / name, error)) return directory / name;
  }
  return std::nullopt;
}

// The reduces of `module` that add f16 or bf16 elements (their computation
// is the add of its two parameters), in the order of the module's text.
std::vector<const Instruction*> NarrowFloatSums(const Module& module) {
  std::vector<const Instruction*> sums;
  for (const std::unique_ptr<Computation>& computation : module.computations()) {
    for (const std::unique_ptr<Instruction>& instruction : computation->instructions()) {
      if (IsNarrowFloatSum(*instruction)) sums.push_back(instruction.get());
    }
  }
  return sums;
}

// Why results of a module with such sums may differ with no backend wrong:
// XLA leaves the order of a reduce's additions open, and how wide they are.
// The interpreter (and the cpu backend) adds in the element type, one
// element after another, which stalls on a long sum (4096 f16 ones give
// 2048: 2048 + 1 rounds to 2048); vulkan adds in f32 and rounds once.
void PrintNarrowFloatSumNote(const Module& module, const std::string& reference_name, std::ostream& out) {
  const std::vector<const Instruction*> sums = NarrowFloatSums(module);
  if (sums.empty()) return;
  const Instruction& first = *sums.front();
  const std::string type(ElementTypeName(first.shape.element_type()));
  out << reference_name << ": note: reduce '" << first.name << "' adds " << type << " elements";
  if (sums.size() > 1)
    out << " (and " << sums.size() - 1 << " more reduce" << (sums.size() > 2 ? "s" : "") << ")";
  out << ", in an order and precision XLA leaves open: the interpreter adds them one by one in " << type
      << ", vulkan in f32 rounded once, so a long sum can differ beyond the tolerance\n";
}

}  // namespace

StatusOr<std::vector<Literal>> ReadExpectedResults(const std::string& directory,
                                                   const std::vector<Literal>& results) {
  std::error_code error;
  if (!fs::is_directory(directory, error)) return NotFound("--expect: '", directory, "' is not a directory");
  std::vector<Literal> expected;
  for (size_t i = 0; i < results.size(); ++i) {
    const std::optional<fs::path> file = ExpectedFile(directory, i);
    if (!file) {
      return NotFound("--expect: '", directory, "' has no expected result ", i, " (", i, ".npy or out", i,
                      ".npy) for the module's ", results.size(), " result", results.size() == 1 ? "" : "s");
    }
    KILN_ASSIGN_OR_RETURN(Literal literal, ReadNpyFile(file->string(), results[i].shape().element_type()));
    expected.push_back(std::move(literal));
  }
  if (ExpectedFile(directory, results.size())) {
    return InvalidArgument("--expect: '", directory, "' holds more expected results than the module's ",
                           results.size());
  }
  return expected;
}

bool CheckResults(const std::vector<Literal>& results, const std::vector<Literal>& reference,
                  const std::string& reference_name, const Module& module, const ToleranceChoice& choice,
                  std::ostream& out) {
  const Tolerance module_tolerance = ModuleTolerance(module);
  bool all_agree = results.size() == reference.size();
  if (!all_agree) {
    out << reference_name << ": " << results.size() << " results but " << reference.size() << " expected\n";
  }
  for (size_t i = 0; i < results.size() && i < reference.size(); ++i) {
    const ElementType type = reference[i].shape().element_type();
    Tolerance tolerance = LeafTolerance(type, module_tolerance);
    const bool inexact = IsFloating(type) || IsComplex(type);
    if (inexact && choice.rtol) tolerance.rtol = *choice.rtol;
    if (inexact && choice.atol) tolerance.atol = *choice.atol;
    const LeafDifference difference = CompareLeaf(results[i], reference[i], tolerance);
    out << reference_name << ": result " << i << " " << results[i].shape().ToString();
    if (difference.agree()) {
      out << " agrees";
    } else {
      all_agree = false;
      out << " DIFFERS: " << difference.first_mismatch << "; " << difference.mismatches << " of "
          << reference[i].element_count() << " elements differ";
    }
    if (inexact) {
      out << " (max |difference| " << difference.max_abs_difference << ", rtol " << tolerance.rtol
          << ", atol " << tolerance.atol << ")";
    }
    out << "\n";
  }
  if (!all_agree) PrintNarrowFloatSumNote(module, reference_name, out);
  return all_agree;
}

}  // namespace kiln::tool
