#include "core/autodiff/jvp_rules.h"

#include <string>

namespace kiln::autodiff {
namespace {

struct JvpRuleEntry {
  Opcode opcode;
  JvpRule rule;  // null: differentiable, but no forward-mode rule yet
};

// The one table of forward-mode rules. An opcode with the kDifferentiable
// trait is either here with its rule or here with null ("not yet"); the
// autodiff test checks that none is missing. Opcodes without the trait have
// no derivative (their results are integers or predicates, or they are
// random, opaque or I/O).
constexpr JvpRuleEntry kJvpRules[] = {
    {Opcode::kAbs, JvpUnaryRule},
    {Opcode::kAdd, JvpAddRule},
    {Opcode::kAllReduce, JvpAllReduceRule},
    {Opcode::kAtan2, JvpAtan2Rule},
    {Opcode::kBatchNormGrad, JvpBatchNormRule},
    {Opcode::kBatchNormInference, JvpBatchNormRule},
    {Opcode::kBatchNormTraining, JvpBatchNormRule},
    {Opcode::kBroadcast, JvpLinearRule},
    {Opcode::kCall, nullptr},  // BuildJvp inlines calls first
    {Opcode::kCbrt, JvpUnaryRule},
    {Opcode::kCeil, JvpZeroRule},
    {Opcode::kClamp, JvpClampRule},
    {Opcode::kComplex, JvpLinearRule},
    {Opcode::kConcatenate, JvpLinearRule},
    {Opcode::kConditional, JvpConditionalRule},
    {Opcode::kConvert, JvpConvertRule},
    {Opcode::kConvolution, JvpBilinearRule},
    {Opcode::kCopy, JvpIdentityRule},
    {Opcode::kCos, JvpUnaryRule},
    {Opcode::kCustomCall, JvpCustomCallRule},  // refuses all but the identity annotations
    {Opcode::kDivide, JvpDivideRule},
    {Opcode::kDot, JvpBilinearRule},
    {Opcode::kDynamicSlice, JvpLinearRule},
    {Opcode::kDynamicUpdateSlice, JvpLinearRule},
    {Opcode::kErf, JvpUnaryRule},
    {Opcode::kExp, JvpUnaryRule},
    {Opcode::kExpm1, JvpUnaryRule},
    {Opcode::kFft, JvpLinearRule},
    {Opcode::kFloor, JvpZeroRule},
    {Opcode::kFusion, nullptr},
    {Opcode::kGather, JvpLinearRule},
    {Opcode::kGetTupleElement, JvpGetTupleElementRule},
    {Opcode::kImag, JvpLinearRule},
    {Opcode::kLog, JvpUnaryRule},
    {Opcode::kLog1p, JvpUnaryRule},
    {Opcode::kLogistic, JvpUnaryRule},
    {Opcode::kMap, JvpMapRule},
    {Opcode::kMaximum, JvpMaxMinRule},
    {Opcode::kMinimum, JvpMaxMinRule},
    {Opcode::kMultiply, JvpMultiplyRule},
    {Opcode::kNegate, JvpUnaryRule},
    {Opcode::kOptimizationBarrier, JvpIdentityRule},
    {Opcode::kPad, JvpLinearRule},
    {Opcode::kPower, JvpPowerRule},
    {Opcode::kReal, JvpLinearRule},
    {Opcode::kReduce, JvpReduceRule},
    {Opcode::kReducePrecision, JvpIdentityRule},
    {Opcode::kReduceWindow, JvpReduceWindowRule},
    {Opcode::kRemainder, JvpRemainderRule},
    {Opcode::kReshape, JvpLinearRule},
    {Opcode::kReverse, JvpLinearRule},
    {Opcode::kRoundNearestAfz, JvpZeroRule},
    {Opcode::kRoundNearestEven, JvpZeroRule},
    {Opcode::kRsqrt, JvpUnaryRule},
    {Opcode::kScatter, JvpScatterRule},
    {Opcode::kSelect, JvpSelectRule},
    {Opcode::kSelectAndScatter, JvpSelectAndScatterRule},
    {Opcode::kSign, JvpZeroRule},
    {Opcode::kSin, JvpUnaryRule},
    {Opcode::kSlice, JvpLinearRule},
    {Opcode::kSort, JvpSortRule},
    {Opcode::kSqrt, JvpUnaryRule},
    {Opcode::kSubtract, JvpSubtractRule},
    {Opcode::kTan, JvpUnaryRule},
    {Opcode::kTanh, JvpUnaryRule},
    {Opcode::kTopK, JvpTopKRule},
    {Opcode::kTranspose, JvpLinearRule},
    {Opcode::kTuple, JvpTupleRule},
    {Opcode::kWhile, JvpWhileRule},
};

}  // namespace

JvpRuleLookup FindJvpRule(Opcode opcode) {
  for (const JvpRuleEntry& entry : kJvpRules) {
    if (entry.opcode != opcode) continue;
    if (entry.rule == nullptr) return {RuleState::kNotYet, nullptr};
    return {RuleState::kRule, entry.rule};
  }
  return {RuleState::kNotDifferentiable, nullptr};
}

Status JvpNoRuleError(const Instruction& instruction, RuleState state) {
  const std::string op(OpcodeName(instruction.opcode));
  if (state == RuleState::kNotYet) {
    return Unimplemented("kiln jvp: no forward-mode rule yet for '", op, "' (instruction ", instruction.name,
                         "); the differentiated parameters reach the result through it");
  }
  return InvalidArgument("kiln jvp: '", op, "' is not differentiable (instruction ", instruction.name, ", ",
                         instruction.shape.ToString(),
                         "); the differentiated parameters must not reach the result through it");
}

}  // namespace kiln::autodiff
