// The derivative rules of reverse mode, one per opcode, kept in one table
// (vjp_rules.cc) beside the op traits of core/opcode.h: every opcode with
// the kDifferentiable trait either has a rule there or is listed there as
// not differentiated yet.
//
// A rule gets the forward instruction (whose operands are forward values it
// may read) and the cotangent of its result, and returns the cotangent of
// each operand (a zero Cotangent for operands that get none: integer
// operands, predicates, indices). It adds what it needs through the emitter.
#pragma once

#include <optional>
#include <vector>

#include "core/autodiff/vjp_emitter.h"
#include "core/status.h"

namespace kiln::autodiff {

using VjpRule = StatusOr<std::vector<Cotangent>> (*)(VjpEmitter& emitter, Instruction& instruction,
                                                     const Cotangent& cotangent);

enum class RuleState {
  kRule,              // differentiated
  kNotYet,            // differentiable, no rule yet: UNIMPLEMENTED
  kNotDifferentiable  // no derivative (no kDifferentiable trait): INVALID_ARGUMENT
};

struct RuleLookup {
  RuleState state = RuleState::kNotDifferentiable;
  VjpRule rule = nullptr;  // set when state is kRule
};

RuleLookup FindVjpRule(Opcode opcode);

// The error for an instruction on the path from a differentiated parameter
// to the result whose opcode has no rule (`state` is not kRule).
Status NoRuleError(const Instruction& instruction, RuleState state);

// The rule of reduce and reduce-window over several operands, which
// ReduceRule and ReduceWindowRule hand over to (variadic_reduction_rules.cc).
StatusOr<std::vector<Cotangent>> VariadicReduceCotangents(VjpEmitter& e, Instruction& x, const Cotangent& ct);

// The rule of reduce and reduce-window for reducers no specialised rule
// covers (a product, any differentiable reducer, over one operand or
// several): the reduction as a tree of reducer applications
// (reduction_tree_rules.cc), which the rules above hand over to.
StatusOr<std::vector<Cotangent>> ReductionTreeCotangents(VjpEmitter& e, Instruction& x, const Cotangent& ct);

// The rule of scatter over several operands whose combiner works component
// by component, which ScatterRule hands over to (variadic_scatter_rules.cc).
StatusOr<std::vector<Cotangent>> VariadicScatterCotangents(VjpEmitter& e, Instruction& x,
                                                           const Cotangent& ct);

// The rules, by family (elementwise_rules.cc, complex_rules.cc, structural_rules.cc, scatter_rules.cc,
// contraction_rules.cc, convolution_rules.cc, window_rules.cc, sort_rules.cc, batch_norm_rules.cc,
// control_flow_rules.cc, registered_op_rules.cc, map_rules.cc); the table in vjp_rules.cc refers to them.
#define KILN_VJP_RULE(name)                                                                              \
  StatusOr<std::vector<Cotangent>> name([[maybe_unused]] VjpEmitter& e, [[maybe_unused]] Instruction& x, \
                                        [[maybe_unused]] const Cotangent& ct)
KILN_VJP_RULE(AddRule);
KILN_VJP_RULE(SubtractRule);
KILN_VJP_RULE(MultiplyRule);
KILN_VJP_RULE(DivideRule);
KILN_VJP_RULE(RemainderRule);
KILN_VJP_RULE(PowerRule);
KILN_VJP_RULE(Atan2Rule);
KILN_VJP_RULE(MaxMinRule);
KILN_VJP_RULE(UnaryRule);
KILN_VJP_RULE(ZeroDerivativeRule);
KILN_VJP_RULE(IdentityRule);
KILN_VJP_RULE(SelectRule);
KILN_VJP_RULE(ClampRule);
KILN_VJP_RULE(ConvertRule);
KILN_VJP_RULE(RealRule);
KILN_VJP_RULE(ImagRule);
KILN_VJP_RULE(ComplexRule);
KILN_VJP_RULE(ComplexAbsRule);  // abs of a complex operand (UnaryRule hands it over)
KILN_VJP_RULE(FftRule);
KILN_VJP_RULE(BroadcastRule);
KILN_VJP_RULE(ReshapeRule);
KILN_VJP_RULE(TransposeRule);
KILN_VJP_RULE(SliceRule);
KILN_VJP_RULE(GatherRule);
KILN_VJP_RULE(ScatterRule);
KILN_VJP_RULE(DynamicSliceRule);
KILN_VJP_RULE(DynamicUpdateSliceRule);
KILN_VJP_RULE(ConcatenateRule);
KILN_VJP_RULE(PadRule);
KILN_VJP_RULE(ReverseRule);
KILN_VJP_RULE(GetTupleElementRule);
KILN_VJP_RULE(TupleRule);
KILN_VJP_RULE(ReduceRule);
KILN_VJP_RULE(DotRule);
KILN_VJP_RULE(ConvolutionRule);
KILN_VJP_RULE(ReduceWindowRule);
KILN_VJP_RULE(SelectAndScatterRule);
KILN_VJP_RULE(SortRule);
KILN_VJP_RULE(TopKRule);
KILN_VJP_RULE(BatchNormTrainingRule);
KILN_VJP_RULE(BatchNormInferenceRule);
KILN_VJP_RULE(BatchNormGradRule);
KILN_VJP_RULE(AllReduceRule);
KILN_VJP_RULE(WhileRule);
KILN_VJP_RULE(ConditionalRule);
KILN_VJP_RULE(CustomCallRule);
KILN_VJP_RULE(MapRule);

}  // namespace kiln::autodiff
