// The optimisation pipeline every backend runs before lowering:
//   annotation custom calls forwarded, short counted while loops unrolled
//   (optional), call inlining, batch-norm expansion;
//   simplification, shape-op simplification, constant folding, CSE and DCE,
//   repeated until nothing changes (bounded);
//   layout normalisation (row-major everywhere);
//   f16/bf16 contractions in f32 (optional);
//   s32 dots of widened s8 operands on the s8 operands (optional);
//   pads and slices around select-and-scatter folded into it (optional);
//   a scalar op on a reduce-window's result folded into it (optional);
//   fusion (optional), then DCE.
// The verifier checks the structure after every pass that changed the module
// and, when asked (verify_output), every shape once at the end.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>

#include "core/ir.h"
#include "core/passes/while_unrolling.h"
#include "core/status.h"

namespace kiln {

struct PipelineOptions {
  // The backend's fusion rule (see core/passes/fusion.h); empty = the generic rule.
  std::function<bool(const Instruction&)> can_fuse;
  bool enable_fusion = true;
  // Unroll while loops of a few trips known at compile time
  // (while_unrolling.h) before the call inliner; empty = loops stay loops.
  std::optional<WhileUnrollingOptions> unroll_while_loops;
  // Whether row reductions join their consumers' kernels (FusionOptions).
  bool fuse_row_reductions = true;
  // Whether gathers join kernels (FusionOptions::fuse_gathers).
  bool fuse_gathers = false;
  // The most arrays one fused kernel binds (FusionOptions::max_kernel_buffers).
  int64_t max_kernel_buffers = std::numeric_limits<int64_t>::max();
  // Run f16/bf16 dots and convolutions in f32 (contraction_upcast.h), for a
  // backend whose fast kernels are f32.
  bool upcast_low_precision_contractions = false;
  // Of those, the ones the backend runs with their low-precision operands
  // as they are (ContractionUpcast::KeepsOperands); empty = none.
  std::function<bool(const Instruction& contraction)> keep_low_precision_contraction;
  // Run s32 dots of s8 operands widened to s32 on the s8 operands
  // (int8_contraction_narrowing.h), for a backend with int8 kernels.
  bool narrow_int8_contractions = false;
  // The backend's rule for folding pads and slices around select-and-scatter
  // into one fusion (select_and_scatter_folding.h); empty = no fold.
  std::function<bool(const Instruction& fusion)> fold_select_and_scatter;
  // The backend's rule for folding op(reduce-window, broadcast(scalar)) into
  // one fusion (reduce_window_epilogue_folding.h); empty = no fold.
  std::function<bool(const Instruction& fusion)> fold_reduce_window_epilogue;
  // Bound on the simplification fixed point.
  int max_simplification_rounds = 8;
  // Verify the module before the first pass; a backend that has just
  // verified the module it copied may skip it.
  bool verify_input = true;
  // Verify the optimised module in full at the end (every shape inferred
  // again, names unique), which finds a pass that built a wrong shape. The
  // structure is checked after each pass that changed the module either way.
  // On for a direct caller (the passes' tests); a backend, which has just
  // verified its input in full, asks for it with VerifyOptimisedModules().
  bool verify_output = true;
};

// Whether a backend verifies the module its passes made in full: in a debug
// build, or with KILN_VERIFY_PASSES set in the environment. Off otherwise:
// every compile verified the module twice in full, its input and its
// passes' output, each about as costly (issue 13).
bool VerifyOptimisedModules();

Status RunOptimizationPipeline(Module& module, const PipelineOptions& options = {});

}  // namespace kiln
