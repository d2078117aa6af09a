// Folds an elementwise op on a reduce-window's result and a scalar into
// one instruction: op(reduce-window(x, init), broadcast(s)) becomes a
// fusion of the three (kind kOutput) reading x, init and s, when the
// backend's predicate takes that fusion. Average pooling as JAX exports it
// is a windowed sum divided by the window's size: with the divide a kernel
// of its own, the pooled result is written, read back and written again,
// as much memory traffic as the pooling itself. The fusion computes the
// same three instructions, so any backend (the interpreter included) may
// run its computation as it is; a backend whose predicate accepts it
// applies the op to each window's result as it stores it. Folded only
// when the reduce-window has no other user and is the op's first operand,
// and the op's second operand is a broadcast of a scalar.
#pragma once

#include <functional>
#include <string_view>
#include <utility>

#include "core/pass.h"

namespace kiln {

class ReduceWindowEpilogueFolding : public Pass {
 public:
  // `accepts` sees each candidate fusion (its computation not yet in the module).
  explicit ReduceWindowEpilogueFolding(std::function<bool(const Instruction& fusion)> accepts)
      : accepts_(std::move(accepts)) {}

  std::string_view name() const override { return "reduce-window-epilogue-folding"; }
  StatusOr<bool> Run(Module& module) override;

 private:
  std::function<bool(const Instruction& fusion)> accepts_;
};

}  // namespace kiln
