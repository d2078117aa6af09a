// Expands batch-norm-training, -inference and -grad into elementwise ops,
// broadcasts and reductions (which then fuse), with the interpreter's
// formulas. f16/bf16 are computed in f32 and rounded once at the end, as the
// interpreter computes in higher precision.
#pragma once

#include "core/pass.h"

namespace kiln {

class BatchNormExpander : public Pass {
 public:
  std::string_view name() const override { return "batch-norm-expander"; }
  StatusOr<bool> Run(Module& module) override;
};

}  // namespace kiln
