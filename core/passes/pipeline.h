// The optimisation pipeline every backend runs before lowering:
//   call inlining, batch-norm expansion;
//   simplification, shape-op simplification, constant folding, CSE and DCE,
//   repeated until nothing changes (bounded);
//   layout normalisation (row-major everywhere);
//   fusion (optional), then DCE.
// The verifier runs after every pass.
#pragma once

#include <functional>

#include "core/ir.h"
#include "core/status.h"

namespace kiln {

struct PipelineOptions {
  // The backend's fusion rule (see core/passes/fusion.h); empty = the generic rule.
  std::function<bool(const Instruction&)> can_fuse;
  bool enable_fusion = true;
  // Bound on the simplification fixed point.
  int max_simplification_rounds = 8;
};

Status RunOptimizationPipeline(Module& module, const PipelineOptions& options = {});

}  // namespace kiln
