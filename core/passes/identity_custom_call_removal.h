// Forwards the annotation custom calls of core/identity_custom_calls.h
// (Sharding, SPMD shape markers, memory-space moves) to their operands, so
// that on one device they cost nothing and hide nothing from fusion.
#pragma once

#include "core/pass.h"

namespace kiln {

class IdentityCustomCallRemoval : public Pass {
 public:
  std::string_view name() const override { return "identity-custom-call-removal"; }
  StatusOr<bool> Run(Module& module) override;
};

}  // namespace kiln
