// Algebraic simplification: local rewrites kept as data (a table of
// opcode -> rewrite rule). Every rule is exact for the types it accepts: no
// x*0 -> 0 for floats (NaN, inf, -0), x+0 only for the true identity -0.0.
#pragma once

#include <span>
#include <string_view>

#include "core/pass.h"
#include "core/passes/rewrite_context.h"

namespace kiln {

// A rule rewrites one instruction of `opcode`: it returns the instruction
// that replaces it (new or existing, of the same shape), or nullptr when the
// pattern does not match.
struct SimplificationRule {
  std::string_view name;
  Opcode opcode;
  Instruction* (*rewrite)(Instruction& instruction, RewriteContext& context);
};

// The rule table, in the order rules are tried.
std::span<const SimplificationRule> AlgebraicSimplificationRules();

class AlgebraicSimplifier : public Pass {
 public:
  std::string_view name() const override { return "algebraic-simplifier"; }
  StatusOr<bool> Run(Module& module) override;
};

}  // namespace kiln
