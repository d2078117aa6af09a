// Common subexpression elimination: instructions with the same opcode,
// operands, attributes, called computations, shape (layout included) and,
// for constants, value are merged into the first of them. Ops with side
// effects or state (rng, infeed, custom-call, ...) are never merged.
#pragma once

#include "core/pass.h"

namespace kiln {

class CommonSubexpressionElimination : public Pass {
 public:
  std::string_view name() const override { return "cse"; }
  StatusOr<bool> Run(Module& module) override;
};

}  // namespace kiln
