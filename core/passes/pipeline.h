// The optimisation pipeline every backend runs before lowering:
//   annotation custom calls forwarded, call inlining, batch-norm expansion;
//   simplification, shape-op simplification, constant folding, CSE and DCE,
//   repeated until nothing changes (bounded);
//   layout normalisation (row-major everywhere);
//   f16/bf16 contractions in f32 (optional);
//   s32 dots of widened s8 operands on the s8 operands (optional);
//   fusion (optional), then DCE.
// The verifier runs after every pass.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>

#include "core/ir.h"
#include "core/status.h"

namespace kiln {

struct PipelineOptions {
  // The backend's fusion rule (see core/passes/fusion.h); empty = the generic rule.
  std::function<bool(const Instruction&)> can_fuse;
  bool enable_fusion = true;
  // Whether row reductions join their consumers' kernels (FusionOptions).
  bool fuse_row_reductions = true;
  // The most arrays one fused kernel binds (FusionOptions::max_kernel_buffers).
  int64_t max_kernel_buffers = std::numeric_limits<int64_t>::max();
  // Run f16/bf16 dots and convolutions in f32 (contraction_upcast.h), for a
  // backend whose fast kernels are f32.
  bool upcast_low_precision_contractions = false;
  // Run s32 dots of s8 operands widened to s32 on the s8 operands
  // (int8_contraction_narrowing.h), for a backend with int8 kernels.
  bool narrow_int8_contractions = false;
  // Bound on the simplification fixed point.
  int max_simplification_rounds = 8;
  // Verify the module before the first pass; a backend that has just
  // verified the module it copied may skip it.
  bool verify_input = true;
};

Status RunOptimizationPipeline(Module& module, const PipelineOptions& options = {});

}  // namespace kiln
