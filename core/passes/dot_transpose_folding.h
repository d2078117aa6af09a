// Folds a transpose of a matrix product into the product: transpose(A.B) is
// B'.A' with the operands swapped and each keeping its contracting
// dimension, so no array is moved (backward passes of dense layers write
// weight gradients this way). Only for 2-D products without batch
// dimensions whose one user is the transpose: otherwise the product would be
// computed twice.
#pragma once

#include "core/pass.h"

namespace kiln {

class DotTransposeFolding : public Pass {
 public:
  std::string_view name() const override { return "dot-transpose-folding"; }
  StatusOr<bool> Run(Module& module) override;
};

}  // namespace kiln
