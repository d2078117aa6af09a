// Inlines every `call`: the callee's instructions replace the call in the
// caller, so later passes (fusion above all) see across the call boundary,
// as JAX wraps jitted functions in calls. A callee that nothing else calls
// gives up its instructions (moved, not copied); one called from several
// places is copied. Computations nothing reaches any more are then removed
// from the module.
#pragma once

#include "core/pass.h"

namespace kiln {

class CallInliner : public Pass {
 public:
  std::string_view name() const override { return "call-inliner"; }
  StatusOr<bool> Run(Module& module) override;
};

}  // namespace kiln
