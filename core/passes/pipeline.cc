#include "core/passes/pipeline.h"

#include <memory>

#include "core/pass.h"
#include "core/passes/algebraic_simplifier.h"
#include "core/passes/batch_norm_expander.h"
#include "core/passes/call_inliner.h"
#include "core/passes/constant_folding.h"
#include "core/passes/contraction_upcast.h"
#include "core/passes/cse.h"
#include "core/passes/dot_transpose_folding.h"
#include "core/passes/fusion.h"
#include "core/passes/identity_custom_call_removal.h"
#include "core/passes/int8_contraction_narrowing.h"
#include "core/passes/layout_normalization.h"
#include "core/passes/shape_op_simplifier.h"
#include "core/verifier.h"

namespace kiln {

Status RunOptimizationPipeline(Module& module, const PipelineOptions& options) {
  if (options.verify_input) KILN_RETURN_IF_ERROR(VerifyModule(module).WithContext("before optimisation"));
  PassPipeline expansion;
  expansion.AddPass(std::make_unique<IdentityCustomCallRemoval>());
  expansion.AddPass(std::make_unique<CallInliner>());
  expansion.AddPass(std::make_unique<BatchNormExpander>());
  KILN_RETURN_IF_ERROR(expansion.Run(module).status());

  PassPipeline simplification;
  simplification.AddPass(std::make_unique<AlgebraicSimplifier>());
  simplification.AddPass(std::make_unique<ShapeOpSimplifier>());
  simplification.AddPass(std::make_unique<DotTransposeFolding>());
  simplification.AddPass(std::make_unique<ConstantFolding>());
  simplification.AddPass(std::make_unique<CommonSubexpressionElimination>());
  simplification.AddPass(std::make_unique<DeadCodeElimination>());
  for (int round = 0; round < options.max_simplification_rounds; ++round) {
    KILN_ASSIGN_OR_RETURN(bool changed, simplification.Run(module));
    if (!changed) break;
  }

  PassPipeline lowering;
  lowering.AddPass(std::make_unique<LayoutNormalization>());
  if (options.upcast_low_precision_contractions) lowering.AddPass(std::make_unique<ContractionUpcast>());
  if (options.narrow_int8_contractions) lowering.AddPass(std::make_unique<Int8ContractionNarrowing>());
  if (options.enable_fusion) {
    FusionOptions fusion;
    fusion.can_fuse = options.can_fuse;
    fusion.fuse_row_reductions = options.fuse_row_reductions;
    lowering.AddPass(std::make_unique<InstructionFusion>(std::move(fusion)));
    lowering.AddPass(std::make_unique<DeadCodeElimination>());
  }
  return lowering.Run(module).status();
}

}  // namespace kiln
