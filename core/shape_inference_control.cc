// Shape inference of control flow (while, conditional, call), leaves
// (constant, parameter, replica-id, partition-id), random numbers, custom
// calls and the token-threaded host communication ops.
#include "core/rng_bit_layout.h"
#include "core/shape_inference_internal.h"

namespace kiln::shape_inference_internal {
namespace {

const Shape kU32Scalar = Shape::Scalar(ElementType::kU32);

StatusOr<Shape> InferWhile(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 1));
  KILN_RETURN_IF_ERROR(ExpectCalledCount(request, 2));
  const Shape& init = request.operands[0];
  const ProgramShape& condition = request.called[0];
  const ProgramShape& body = request.called[1];
  if (condition.parameters.size() != 1 || !condition.parameters[0].Compatible(init) ||
      !condition.result.Compatible(Shape::Scalar(ElementType::kPred))) {
    return OpError(request, "condition ", condition.ToString(), " must be (", init.ToString(), ") -> pred[]");
  }
  if (body.parameters.size() != 1 || !body.parameters[0].Compatible(init) || !body.result.Compatible(init)) {
    return OpError(request, "body ", body.ToString(), " must be (", init.ToString(), ") -> ",
                   init.ToString());
  }
  return init;
}

StatusOr<Shape> InferConditional(const OpRequest& request) {
  if (request.operands.empty()) return OpError(request, "needs a predicate or branch index");
  const Shape& selector = request.operands[0];
  const bool pred_form = selector.IsScalar() && selector.element_type() == ElementType::kPred;
  const bool index_form = selector.IsScalar() && selector.element_type() == ElementType::kS32;
  if (!pred_form && !index_form) {
    return OpError(request, "first operand ", selector.ToString(), " must be pred[] or s32[]");
  }
  const size_t branches = request.called.size();
  if (pred_form && branches != 2) {
    return OpError(request, "with a pred[] predicate needs 2 branch computations but got ", branches);
  }
  if (branches < 1) return OpError(request, "needs at least one branch computation");
  if (request.operands.size() != branches + 1) {
    return OpError(request, "takes one operand per branch (", branches, ") after the selector but got ",
                   request.operands.size() - 1);
  }
  const Shape& result = request.called[0].result;
  for (size_t i = 0; i < branches; ++i) {
    const ProgramShape& branch = request.called[i];
    const Shape& operand = request.operands[i + 1];
    if (branch.parameters.size() != 1 || !branch.parameters[0].Compatible(operand)) {
      return OpError(request, "branch ", i, " computation ", branch.ToString(),
                     " must take one parameter of shape ", operand.ToString());
    }
    if (!branch.result.Compatible(result)) {
      return OpError(request, "branch ", i, " returns ", branch.result.ToString(), " but branch 0 returns ",
                     result.ToString(), "; all branches must return the same shape");
    }
  }
  return result;
}

// call and fusion: the callee's signature must match the operands.
StatusOr<Shape> InferCall(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectCalledCount(request, 1));
  const ProgramShape& callee = request.called[0];
  const char* role = request.opcode == Opcode::kFusion ? "fused computation" : "to_apply computation";
  if (callee.parameters.size() != request.operands.size()) {
    return OpError(request, role, " takes ", callee.parameters.size(), " parameters; got ",
                   request.operands.size(), " operands");
  }
  for (size_t i = 0; i < request.operands.size(); ++i) {
    if (!callee.parameters[i].Compatible(request.operands[i])) {
      return OpError(request, "operand ", i, " has shape ", request.operands[i].ToString(),
                     "; the callee expects ", callee.parameters[i].ToString());
    }
  }
  return callee.result;
}

StatusOr<Shape> InferRng(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 2));
  const Shape& a = request.operands[0];
  const Shape& b = request.operands[1];
  KILN_RETURN_IF_ERROR(ExpectScalar(request, a, "first parameter"));
  KILN_RETURN_IF_ERROR(ExpectScalar(request, b, "second parameter"));
  KILN_ASSIGN_OR_RETURN(Shape declared, RequireDeclared(request));
  KILN_RETURN_IF_ERROR(ExpectArray(request, declared, "result"));
  const ElementType type = a.element_type();
  if (b.element_type() != type || declared.element_type() != type) {
    return OpError(request, "parameters ", a.ToString(), ", ", b.ToString(), " and result ",
                   declared.ToString(), " must share an element type");
  }
  const bool normal = request.attrs.rng_distribution == RngDistribution::kNormal;
  if (normal ? !IsFloating(type) : !(IsFloating(type) || IsIntegral(type))) {
    return OpError(request, normal ? "normal" : "uniform", " distribution does not support element type ",
                   ElementTypeName(type));
  }
  return declared;
}

StatusOr<Shape> InferRngBitGenerator(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 1));
  const Shape& state = request.operands[0];
  if (!state.IsArray() || state.rank() != 1 || state.element_type() != ElementType::kU64 ||
      state.dimensions(0) < 1) {
    return OpError(request, "state ", state.ToString(), " must be a non-empty u64 vector");
  }
  KILN_ASSIGN_OR_RETURN(Shape declared, RequireDeclared(request));
  if (!declared.IsTuple() || declared.tuple_shapes().size() != 2 ||
      !declared.tuple_shapes(0).Compatible(state) || !declared.tuple_shapes(1).IsArray() ||
      !IsIntegral(declared.tuple_shapes(1).element_type())) {
    return OpError(request, "result ", declared.ToString(), " must be (", state.ToString(),
                   ", integer array of random bits)");
  }
  // The state size the algorithm needs and the bits' width, as XLA.
  KILN_RETURN_IF_ERROR(
      PlanRngBits(request.attrs.rng_algorithm, state.dimensions(0), declared.tuple_shapes(1)).status());
  return declared;
}

Status ExpectToken(const OpRequest& request, const Shape& shape, const char* role) {
  if (!shape.IsToken()) return OpError(request, role, " must be a token but has shape ", shape.ToString());
  return OkStatus();
}

StatusOr<Shape> InferInfeedOrRecv(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 1));
  KILN_RETURN_IF_ERROR(ExpectToken(request, request.operands[0], "operand"));
  KILN_ASSIGN_OR_RETURN(Shape declared, RequireDeclared(request));
  const bool recv = request.opcode == Opcode::kRecv;
  const size_t size = recv ? 3 : 2;
  const auto& elements = declared.tuple_shapes();
  if (!declared.IsTuple() || elements.size() != size || !elements.back().IsToken() ||
      (recv && !elements[1].Compatible(kU32Scalar))) {
    return OpError(request, "result ", declared.ToString(), " must be ",
                   recv ? "(data, u32[], token[])" : "(data, token[])");
  }
  return declared;
}

StatusOr<Shape> InferDataAndToken(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 2));
  KILN_RETURN_IF_ERROR(ExpectToken(request, request.operands[1], "second operand"));
  if (request.opcode == Opcode::kOutfeed) return Shape::Token();
  return Shape::Tuple({request.operands[0], kU32Scalar, Shape::Token()});
}

StatusOr<Shape> InferSendOrRecvDone(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 1));
  const Shape& operand = request.operands[0];
  if (!operand.IsTuple() || operand.tuple_shapes().size() != 3 || !operand.tuple_shapes(2).IsToken()) {
    return OpError(request, "operand ", operand.ToString(), " must be the (data, u32[], token[]) of a ",
                   request.opcode == Opcode::kSendDone ? "send" : "recv");
  }
  if (request.opcode == Opcode::kSendDone) return Shape::Token();
  return Shape::Tuple({operand.tuple_shapes(0), Shape::Token()});
}

StatusOr<Shape> InferAfterAll(const OpRequest& request) {
  for (const Shape& operand : request.operands)
    KILN_RETURN_IF_ERROR(ExpectToken(request, operand, "operand"));
  return Shape::Token();
}

StatusOr<Shape> InferLeaf(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 0));
  if (request.opcode == Opcode::kReplicaId || request.opcode == Opcode::kPartitionId) return kU32Scalar;
  KILN_ASSIGN_OR_RETURN(Shape declared, RequireDeclared(request));
  if (request.opcode == Opcode::kParameter && request.attrs.parameter_number < 0) {
    return OpError(request, "parameter number ", request.attrs.parameter_number, " must be >= 0");
  }
  return declared;
}

}  // namespace

StatusOr<Shape> InferControlAndMisc(const OpRequest& request) {
  switch (request.opcode) {
    case Opcode::kWhile: return InferWhile(request);
    case Opcode::kConditional: return InferConditional(request);
    case Opcode::kCall:
    case Opcode::kFusion: return InferCall(request);
    case Opcode::kCustomCall: return RequireDeclared(request);
    case Opcode::kRng: return InferRng(request);
    case Opcode::kRngBitGenerator: return InferRngBitGenerator(request);
    case Opcode::kInfeed:
    case Opcode::kRecv: return InferInfeedOrRecv(request);
    case Opcode::kOutfeed:
    case Opcode::kSend: return InferDataAndToken(request);
    case Opcode::kSendDone:
    case Opcode::kRecvDone: return InferSendOrRecvDone(request);
    case Opcode::kAfterAll: return InferAfterAll(request);
    case Opcode::kOptimizationBarrier:
      KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 1));
      return request.operands[0];
    case Opcode::kConstant:
    case Opcode::kParameter:
    case Opcode::kReplicaId:
    case Opcode::kPartitionId: return InferLeaf(request);
    default: return OpError(request, "has no shape inference rule");
  }
}

}  // namespace kiln::shape_inference_internal
