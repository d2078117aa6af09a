#include "core/pass.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/verifier.h"

namespace kiln {

StatusOr<bool> PassPipeline::Run(Module& module) {
  // Debugging aid: with KILN_PASS_TIMING set, each pass's time on stderr.
  static const bool timing = std::getenv("KILN_PASS_TIMING") != nullptr;
  bool changed = false;
  std::string changed_by;  // the passes that changed the module, for an error
  for (const auto& pass : passes_) {
    const auto start = std::chrono::steady_clock::now();
    KILN_ASSIGN_OR_RETURN(bool pass_changed, pass->Run(module));
    if (timing) {
      const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
      std::fprintf(stderr, "kiln pass %-32s %10.3f ms%s\n", std::string(pass->name()).c_str(), took.count(),
                   pass_changed ? " (changed)" : "");
    }
    if (!pass_changed) continue;  // what was verified before still holds
    Status verified = VerifyModuleStructure(module);
    if (!verified.ok()) {
      return Internal("module invalid after pass '", pass->name(), "': ", verified.message());
    }
    changed_by += (changed ? ", '" : "'") + std::string(pass->name()) + "'";
    changed = true;
  }
  if (changed && verify_shapes_at_end_) {
    Status verified = VerifyModule(module);
    if (!verified.ok()) {
      return Internal("module invalid after pass(es) ", changed_by, ": ", verified.message());
    }
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
