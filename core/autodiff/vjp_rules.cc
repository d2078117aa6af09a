#include "core/autodiff/vjp_rules.h"

#include <array>
#include <string>

namespace kiln::autodiff {
namespace {

struct RuleEntry {
  Opcode opcode;
  VjpRule rule;  // null: differentiable, but no rule yet
};

// The one table of derivative rules. An opcode with the kDifferentiable
// trait is either here with its rule or here with null ("not yet"); the
// autodiff test checks that none is missing. Opcodes without the trait have
// no derivative (their results are integers or predicates, or they are
// random, opaque or I/O).
constexpr RuleEntry kRules[] = {
    {Opcode::kAbs, UnaryRule},
    {Opcode::kAdd, AddRule},
    {Opcode::kAllReduce, AllReduceRule},
    {Opcode::kAtan2, Atan2Rule},
    {Opcode::kBatchNormGrad, BatchNormGradRule},
    {Opcode::kBatchNormInference, BatchNormInferenceRule},
    {Opcode::kBatchNormTraining, BatchNormTrainingRule},
    {Opcode::kBroadcast, BroadcastRule},
    {Opcode::kCall, nullptr},  // BuildVjp inlines calls first; a rule is for called computations later
    {Opcode::kCbrt, UnaryRule},
    {Opcode::kCeil, ZeroDerivativeRule},
    {Opcode::kClamp, ClampRule},
    {Opcode::kComplex, ComplexRule},
    {Opcode::kConcatenate, ConcatenateRule},
    {Opcode::kConditional, ConditionalRule},
    {Opcode::kConvert, ConvertRule},
    {Opcode::kConvolution, ConvolutionRule},
    {Opcode::kCopy, IdentityRule},
    {Opcode::kCos, UnaryRule},
    {Opcode::kCustomCall, CustomCallRule},  // registered ops with a gradient; refuses the rest
    {Opcode::kDivide, DivideRule},
    {Opcode::kDot, DotRule},
    {Opcode::kDynamicSlice, DynamicSliceRule},
    {Opcode::kDynamicUpdateSlice, DynamicUpdateSliceRule},
    {Opcode::kErf, UnaryRule},
    {Opcode::kExp, UnaryRule},
    {Opcode::kExpm1, UnaryRule},
    {Opcode::kFft, FftRule},
    {Opcode::kFloor, ZeroDerivativeRule},
    {Opcode::kFusion, nullptr},
    {Opcode::kGather, GatherRule},
    {Opcode::kGetTupleElement, GetTupleElementRule},
    {Opcode::kImag, ImagRule},
    {Opcode::kLog, UnaryRule},
    {Opcode::kLog1p, UnaryRule},
    {Opcode::kLogistic, UnaryRule},
    {Opcode::kMap, MapRule},
    {Opcode::kMaximum, MaxMinRule},
    {Opcode::kMinimum, MaxMinRule},
    {Opcode::kMultiply, MultiplyRule},
    {Opcode::kNegate, UnaryRule},
    {Opcode::kOptimizationBarrier, IdentityRule},
    {Opcode::kPad, PadRule},
    {Opcode::kPower, PowerRule},
    {Opcode::kReal, RealRule},
    {Opcode::kReduce, ReduceRule},
    {Opcode::kReducePrecision, IdentityRule},
    {Opcode::kReduceWindow, ReduceWindowRule},
    {Opcode::kRemainder, RemainderRule},
    {Opcode::kReshape, ReshapeRule},
    {Opcode::kReverse, ReverseRule},
    {Opcode::kRoundNearestAfz, ZeroDerivativeRule},
    {Opcode::kRoundNearestEven, ZeroDerivativeRule},
    {Opcode::kRsqrt, UnaryRule},
    {Opcode::kScatter, ScatterRule},
    {Opcode::kSelect, SelectRule},
    {Opcode::kSelectAndScatter, SelectAndScatterRule},
    {Opcode::kSign, ZeroDerivativeRule},
    {Opcode::kSin, UnaryRule},
    {Opcode::kSlice, SliceRule},
    {Opcode::kSort, SortRule},
    {Opcode::kSqrt, UnaryRule},
    {Opcode::kSubtract, SubtractRule},
    {Opcode::kTan, UnaryRule},
    {Opcode::kTanh, UnaryRule},
    {Opcode::kTopK, TopKRule},
    {Opcode::kTranspose, TransposeRule},
    {Opcode::kTuple, TupleRule},
    {Opcode::kWhile, WhileRule},
};

}  // namespace

RuleLookup FindVjpRule(Opcode opcode) {
  for (const RuleEntry& entry : kRules) {
    if (entry.opcode != opcode) continue;
    if (entry.rule == nullptr) return {RuleState::kNotYet, nullptr};
    return {RuleState::kRule, entry.rule};
  }
  return {RuleState::kNotDifferentiable, nullptr};
}

Status NoRuleError(const Instruction& instruction, RuleState state) {
  const std::string op(OpcodeName(instruction.opcode));
  if (state == RuleState::kNotYet) {
    return Unimplemented("kiln grad: no derivative rule yet for '", op, "' (instruction ", instruction.name,
                         "); the differentiated parameters reach the result through it");
  }
  return InvalidArgument("kiln grad: '", op, "' is not differentiable (instruction ", instruction.name, ", ",
                         instruction.shape.ToString(),
                         "); the differentiated parameters must not reach the result through it");
}

}  // namespace kiln::autodiff
