// Folds the pad before a select-and-scatter and the slice after it into one
// instruction: slice(select-and-scatter(pad(x, v), s, i)) becomes a fusion
// of the three (kind kOutput) reading x, v, s and i, when the backend's
// predicate takes that fusion. JAX's max-pool gradient is this chain: it
// pads the operand with -inf, select-and-scatters, then slices the padding
// off, and the padded operand and the padded result cost as much memory
// traffic as the select-and-scatter itself. A source s that is a broadcast
// of a scalar c read by nothing else (the gradient of a sum: ones) folds in
// too, the fusion reading c instead of s, so the broadcast is never
// written out. The fusion computes the same
// three instructions, so any backend (the interpreter included) may run its
// computation as it is; a backend whose predicate accepts it runs it as one
// step. Folded only when the pad has no other user, the select-and-scatter
// no other user than the slice, and the pad is its first operand only.
#pragma once

#include <functional>
#include <string_view>
#include <utility>

#include "core/pass.h"

namespace kiln {

class SelectAndScatterFolding : public Pass {
 public:
  // `accepts` sees each candidate fusion (its computation not yet in the module).
  explicit SelectAndScatterFolding(std::function<bool(const Instruction& fusion)> accepts)
      : accepts_(std::move(accepts)) {}

  std::string_view name() const override { return "select-and-scatter-folding"; }
  StatusOr<bool> Run(Module& module) override;

 private:
  std::function<bool(const Instruction& fusion)> accepts_;
};

}  // namespace kiln
