// The derivative rule of all-reduce with an add reducer: its transpose is
// the same sum across replicas (JAX's psum transposes to psum).
#include "core/autodiff/rule_helpers.h"
#include "core/autodiff/vjp_rules.h"

namespace kiln::autodiff {
namespace {}  // namespace

KILN_VJP_RULE(AllReduceRule) {
  const Instruction* root = x.called.size() == 1 ? x.called[0]->root() : nullptr;
  const bool adds = root != nullptr && root->opcode == Opcode::kAdd &&
                    root->operand(0)->opcode == Opcode::kParameter &&
                    root->operand(1)->opcode == Opcode::kParameter && root->operand(0) != root->operand(1);
  if (x.operands.size() != 1 || !adds || !x.shape.IsArray()) {
    return Unimplemented(
        "kiln grad: no derivative rule yet for 'all-reduce' over several operands or with a reducer "
        "other than add (instruction ",
        x.name, ")");
  }
  return std::vector<Cotangent>{Of(e.Clone(x, {ct.array}))};
}

}  // namespace kiln::autodiff
