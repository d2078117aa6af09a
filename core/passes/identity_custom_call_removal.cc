#include "core/passes/identity_custom_call_removal.h"

#include "core/identity_custom_calls.h"
#include "core/ir_edit.h"

namespace kiln {

StatusOr<bool> IdentityCustomCallRemoval::Run(Module& module) {
  bool changed = false;
  for (const std::unique_ptr<Computation>& computation : module.computations()) {
    UseReplacer replacer(*computation);
    bool found = false;
    for (const std::unique_ptr<Instruction>& instruction : computation->instructions()) {
      replacer.Forward(*instruction);
      if (instruction->opcode != Opcode::kCustomCall ||
          !IsIdentityCustomCall(instruction->attrs.custom_call_target)) {
        continue;
      }
      // Backends check the shapes before the pipeline runs; a mismatch that
      // reaches here is left for the verifier's sake, never forwarded.
      if (!CheckIdentityCustomCall(*instruction, "identity-custom-call-removal").ok()) continue;
      replacer.Replace(instruction.get(), instruction->operand(0));
      found = true;
    }
    if (found && replacer.Apply()) {
      // Unused now; removed here because device backends run this pass
      // even when they run no other (optimisation level 0).
      computation->RemoveDeadInstructions();
      changed = true;
    }
  }
  return changed;
}

}  // namespace kiln
