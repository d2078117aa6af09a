// `kiln run --compare-with BACKEND` and `--expect DIR`: result leaves checked
// against a reference within a tolerance (core/literal_compare.h), one line
// per leaf.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/ir.h"
#include "core/literal.h"
#include "core/status.h"

namespace kiln::tool {

// Tolerances given on the command line; unset ones follow the element types.
struct ToleranceChoice {
  std::optional<double> rtol;
  std::optional<double> atol;
};

// Reads the expected value of each of `results` from `directory`: leaf i from
// i.npy, or else outi.npy (the conformance corpus's names). NOT_FOUND names a
// missing file; INVALID_ARGUMENT says when the directory holds more results
// than the module returns.
StatusOr<std::vector<Literal>> ReadExpectedResults(const std::string& directory,
                                                   const std::vector<Literal>& results);

// Compares each result with the reference leaf of the same index and prints
// "REFERENCE: result I TYPE[DIMS] agrees|DIFFERS ..." for each to `out`.
// When some differ and `module` sums f16 or bf16 elements in a reduce, a
// line "REFERENCE: note: ..." follows: XLA leaves the order and precision
// of those additions open, and backends differ there (vulkan adds in f32,
// the interpreter in the element type). Returns true when all agree.
bool CheckResults(const std::vector<Literal>& results, const std::vector<Literal>& reference,
                  const std::string& reference_name, const Module& module, const ToleranceChoice& choice,
                  std::ostream& out);

}  // namespace kiln::tool
