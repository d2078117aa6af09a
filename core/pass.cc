#include "core/pass.h"

#include <string>

#include "core/verifier.h"

namespace kiln {

StatusOr<bool> PassPipeline::Run(Module& module) {
  bool changed = false;
  for (const auto& pass : passes_) {
    KILN_ASSIGN_OR_RETURN(bool pass_changed, pass->Run(module));
    if (!pass_changed) continue;  // what was verified before still holds
    Status verified = VerifyModule(module);
    if (!verified.ok()) {
      return Internal("module invalid after pass '", pass->name(), "': ", verified.message());
    }
    changed = true;
  }
  return changed;
}

StatusOr<bool> DeadCodeElimination::Run(Module& module) {
  bool changed = false;
  for (const auto& computation : module.computations()) {
    changed = computation->RemoveDeadInstructions() || changed;
  }
  return changed;
}

}  // namespace kiln
