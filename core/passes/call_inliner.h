// Inlines every `call`: the callee's instructions are copied into the caller
// in its place, so later passes (fusion above all) see across the call
// boundary, as JAX wraps jitted functions in calls. Computations nothing
// reaches any more are then removed from the module.
#pragma once

#include "core/pass.h"

namespace kiln {

class CallInliner : public Pass {
 public:
  std::string_view name() const override { return "call-inliner"; }
  StatusOr<bool> Run(Module& module) override;
};

}  // namespace kiln
