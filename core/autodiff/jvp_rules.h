// The derivative rules of forward mode, one per opcode, kept in one table
// (jvp_rules.cc) beside the op traits of core/opcode.h and apart from the
// reverse-mode table (vjp_rules.cc): every opcode with the kDifferentiable
// trait either has a rule there or is listed there as not done yet.
//
// A rule gets the forward instruction (whose operands are forward values it
// may read) and the tangent of each operand (zero for operands no
// differentiated parameter reaches, and always for integers and
// predicates), at least one of them not zero, and returns the tangent of
// the result. It adds what it needs through the emitter.
#pragma once

#include <span>
#include <utility>
#include <vector>

#include "core/autodiff/jvp.h"
#include "core/autodiff/vjp_rules.h"

namespace kiln::autodiff {

using JvpRule = StatusOr<Tangent> (*)(VjpEmitter& emitter, Instruction& instruction,
                                      std::span<const Tangent> operand_tangents);

struct JvpRuleLookup {
  RuleState state = RuleState::kNotDifferentiable;
  JvpRule rule = nullptr;  // set when state is kRule
};

JvpRuleLookup FindJvpRule(Opcode opcode);

// The error for an instruction on the way from a differentiated parameter
// to the result whose opcode has no forward-mode rule (`state` is not kRule).
Status JvpNoRuleError(const Instruction& instruction, RuleState state);

// The value of tangent `t` of a value of `shape`: zeros where it is
// symbolically zero (and in the leaves that are not floats).
Instruction* DenseTangent(VjpEmitter& e, const Tangent& t, const Shape& shape);

// The parameters of a computation of its own that a rule differentiates and
// calls from the tangent (map's lifted body, batch-norm's expansion): one
// per operand of `x`, then one per operand with a tangent, each the seed of
// that operand for EmitTangents; `arguments` is what the call passes (x's
// operands, then those tangents).
struct TangentCallParameters {
  std::vector<Instruction*> operands;
  std::vector<std::pair<Instruction*, Tangent>> seeds;
  std::vector<Instruction*> arguments;
};
TangentCallParameters AddTangentCallParameters(VjpEmitter& d, const Instruction& x,
                                               std::span<const Tangent> t);

// The rule of reduce and reduce-window over several operands, which theirs
// hand over to (jvp_variadic_reduction_rules.cc).
StatusOr<Tangent> JvpVariadicReduction(VjpEmitter& e, Instruction& x, std::span<const Tangent> t);

// The forward-mode rule of scatter over several operands, which
// JvpScatterRule hands over to (variadic_scatter_rules.cc).
StatusOr<Tangent> JvpVariadicScatter(VjpEmitter& e, Instruction& x, std::span<const Tangent> t);

// The rules, by family (jvp_elementwise_rules.cc, jvp_linear_rules.cc,
// jvp_scatter_rules.cc, jvp_reduction_rules.cc, jvp_control_flow_rules.cc, map_rules.cc,
// jvp_batch_norm_rules.cc); the table in
// jvp_rules.cc refers to them.
#define KILN_JVP_RULE(name)                                                               \
  StatusOr<Tangent> name([[maybe_unused]] VjpEmitter& e, [[maybe_unused]] Instruction& x, \
                         [[maybe_unused]] std::span<const Tangent> t)
KILN_JVP_RULE(JvpAddRule);
KILN_JVP_RULE(JvpSubtractRule);
KILN_JVP_RULE(JvpMultiplyRule);
KILN_JVP_RULE(JvpDivideRule);
KILN_JVP_RULE(JvpRemainderRule);
KILN_JVP_RULE(JvpPowerRule);
KILN_JVP_RULE(JvpAtan2Rule);
KILN_JVP_RULE(JvpMaxMinRule);
KILN_JVP_RULE(JvpUnaryRule);
KILN_JVP_RULE(JvpZeroRule);
KILN_JVP_RULE(JvpIdentityRule);
KILN_JVP_RULE(JvpSelectRule);
KILN_JVP_RULE(JvpClampRule);
KILN_JVP_RULE(JvpConvertRule);
KILN_JVP_RULE(JvpLinearRule);
KILN_JVP_RULE(JvpBilinearRule);
KILN_JVP_RULE(JvpScatterRule);
KILN_JVP_RULE(JvpAllReduceRule);
KILN_JVP_RULE(JvpSelectAndScatterRule);
KILN_JVP_RULE(JvpGetTupleElementRule);
KILN_JVP_RULE(JvpTupleRule);
KILN_JVP_RULE(JvpCustomCallRule);
KILN_JVP_RULE(JvpReduceRule);
KILN_JVP_RULE(JvpReduceWindowRule);
KILN_JVP_RULE(JvpSortRule);
KILN_JVP_RULE(JvpTopKRule);
KILN_JVP_RULE(JvpWhileRule);
KILN_JVP_RULE(JvpConditionalRule);
KILN_JVP_RULE(JvpMapRule);
KILN_JVP_RULE(JvpBatchNormRule);

}  // namespace kiln::autodiff
