#include "core/passes/pipeline.h"

#include <cstdlib>
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
#include "core/passes/reduce_window_epilogue_folding.h"
#include "core/passes/select_and_scatter_folding.h"
#include "core/passes/shape_op_simplifier.h"
#include "core/verifier.h"

namespace kiln {

bool VerifyOptimisedModules() {
#ifdef NDEBUG
  static const bool asked = std::getenv("KILN_VERIFY_PASSES") != nullptr;
  return asked;
#else
  return true;
#endif
}

Status RunOptimizationPipeline(Module& module, const PipelineOptions& options) {
  if (options.verify_input) KILN_RETURN_IF_ERROR(VerifyModule(module).WithContext("before optimisation"));
  // Each stage checks the structure after every pass that changed the
  // module; the shapes are re-inferred once, at the end (core/pass.h).
  constexpr bool kVerifyShapesAtEnd = false;
  PassPipeline expansion(kVerifyShapesAtEnd);
  expansion.AddPass(std::make_unique<IdentityCustomCallRemoval>());
  // The unrolled trips are calls: before the inliner.
  if (options.unroll_while_loops)
    expansion.AddPass(std::make_unique<WhileUnrolling>(*options.unroll_while_loops));
  expansion.AddPass(std::make_unique<CallInliner>());
  expansion.AddPass(std::make_unique<BatchNormExpander>());
  KILN_ASSIGN_OR_RETURN(bool changed, expansion.Run(module));

  PassPipeline simplification(kVerifyShapesAtEnd);
  simplification.AddPass(std::make_unique<AlgebraicSimplifier>());
  simplification.AddPass(std::make_unique<ShapeOpSimplifier>());
  simplification.AddPass(std::make_unique<DotTransposeFolding>());
  simplification.AddPass(std::make_unique<ConstantFolding>());
  simplification.AddPass(std::make_unique<CommonSubexpressionElimination>());
  simplification.AddPass(std::make_unique<DeadCodeElimination>());
  for (int round = 0; round < options.max_simplification_rounds; ++round) {
    KILN_ASSIGN_OR_RETURN(bool simplified, simplification.Run(module));
    changed = simplified || changed;
    if (!simplified) break;
  }

  PassPipeline lowering(kVerifyShapesAtEnd);
  lowering.AddPass(std::make_unique<LayoutNormalization>());
  if (options.upcast_low_precision_contractions)
    lowering.AddPass(std::make_unique<ContractionUpcast>(options.keep_low_precision_contraction));
  if (options.narrow_int8_contractions) lowering.AddPass(std::make_unique<Int8ContractionNarrowing>());
  if (options.fold_select_and_scatter)
    lowering.AddPass(std::make_unique<SelectAndScatterFolding>(options.fold_select_and_scatter));
  if (options.fold_reduce_window_epilogue)
    lowering.AddPass(std::make_unique<ReduceWindowEpilogueFolding>(options.fold_reduce_window_epilogue));
  if (options.enable_fusion) {
    FusionOptions fusion;
    fusion.can_fuse = options.can_fuse;
    fusion.fuse_row_reductions = options.fuse_row_reductions;
    fusion.fuse_gathers = options.fuse_gathers;
    fusion.max_kernel_buffers = options.max_kernel_buffers;
    lowering.AddPass(std::make_unique<InstructionFusion>(std::move(fusion)));
    lowering.AddPass(std::make_unique<DeadCodeElimination>());
  }
  KILN_ASSIGN_OR_RETURN(bool lowered, lowering.Run(module));
  if (!changed && !lowered) return OkStatus();  // the module as given (or as verified)
  if (!options.verify_output) return OkStatus();
  Status verified = VerifyModule(module);
  if (!verified.ok()) return Internal("module invalid after the optimisation passes: ", verified.message());
  return OkStatus();
}

}  // namespace kiln
