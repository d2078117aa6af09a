// Ops that talk to the host: infeed and outfeed (the backend's queues) and
// custom-call (a registered C function).
#include "core/identity_custom_calls.h"
#include "core/interpreter/kernels.h"
#include "core/interpreter/lapack_calls.h"
#include "core/op_registry.h"

namespace kiln::interpreter {
namespace {

bool EndsWithToken(const Shape& shape) {
  return shape.IsTuple() && !shape.tuple_shapes().empty() && shape.tuple_shapes().back().IsToken();
}

void CollectLeafPointers(Literal& literal, std::vector<void*>& pointers) {
  if (literal.shape().IsTuple()) {
    for (Literal& element : literal.mutable_tuple_elements()) CollectLeafPointers(element, pointers);
  } else if (literal.shape().IsArray()) {
    pointers.push_back(literal.raw().data());
  }
}

void CollectLeafPointers(const Literal& literal, std::vector<const void*>& pointers) {
  if (literal.shape().IsTuple()) {
    for (const Literal& element : literal.tuple_elements()) CollectLeafPointers(element, pointers);
  } else if (literal.shape().IsArray()) {
    pointers.push_back(literal.raw().data());
  }
}

}  // namespace

StatusOr<Literal> EvaluateInfeed(const Instruction& instruction, Operands, EvalContext& context) {
  const bool with_token = EndsWithToken(instruction.shape) && instruction.shape.tuple_shapes().size() == 2;
  const Shape& data_shape = with_token ? instruction.shape.tuple_shapes(0) : instruction.shape;
  Literal data(data_shape);
  // An empty tuple reads nothing (the seed's rule).
  const bool reads = !(data_shape.IsTuple() && data_shape.tuple_shapes().empty());
  if (reads) {
    std::lock_guard<std::mutex> lock(context.queues->mutex);
    if (context.queues->infeed.empty()) {
      return FailedPrecondition(
          "infeed of ", data_shape.ToString(),
          " found the infeed queue empty; queue an array with kiln_client_transfer_to_infeed first");
    }
    if (!context.queues->infeed.front().shape().Compatible(data_shape)) {
      return InvalidArgument("infeed expects ", data_shape.ToString(), " but the queue holds ",
                             context.queues->infeed.front().shape().ToString());
    }
    data = std::move(context.queues->infeed.front());
    context.queues->infeed.pop_front();
    data.set_layout(data_shape.layout());
  }
  if (!with_token) return data;
  std::vector<Literal> elements;
  elements.push_back(std::move(data));
  elements.emplace_back(Shape::Token());
  return Literal::Tuple(std::move(elements));
}

StatusOr<Literal> EvaluateOutfeed(const Instruction&, Operands operands, EvalContext& context) {
  if (operands.empty()) return InvalidArgument("outfeed needs an operand");
  {
    std::lock_guard<std::mutex> lock(context.queues->mutex);
    context.queues->outfeed.push_back(*operands[0]);
  }
  return Literal(Shape::Token());
}

StatusOr<Literal> EvaluateCustomCall(const Instruction& instruction, Operands operands) {
  const std::string& target = instruction.attrs.custom_call_target;
  if (IsIdentityCustomCall(target)) {
    // A partitioning or placement annotation: its operand, on one device.
    KILN_RETURN_IF_ERROR(CheckIdentityCustomCall(instruction, "interpreter"));
    return *operands[0];
  }
  if (const BuiltinCustomCall* builtin = FindBuiltinCustomCall(target)) {
    return EvaluateLapackCall(*builtin, instruction, operands);
  }
  if (std::shared_ptr<const OpDef> def = FindRegisteredOp(target)) {
    // A user-defined op: its host kernel (cpu and interpreter run it alike).
    return EvaluateRegisteredOp(*def, instruction, operands, "host");
  }
  CustomCallFunction function = FindCustomCallTarget(target);
  if (function == nullptr) {
    return NotFound("custom-call target '", target,
                    "' is not registered; register it with kiln_register_custom_call");
  }
  // Tuple operands are passed as arrays of leaf pointers, like tuple results.
  std::vector<std::vector<const void*>> tuple_inputs(operands.size());
  std::vector<const void*> inputs;
  for (size_t i = 0; i < operands.size(); ++i) {
    const Literal& operand = *operands[i];
    if (operand.shape().IsTuple()) {
      CollectLeafPointers(operand, tuple_inputs[i]);
      inputs.push_back(tuple_inputs[i].data());
    } else if (operand.shape().IsArray()) {
      inputs.push_back(operand.raw().data());
    } else {
      inputs.push_back(nullptr);  // tokens carry no data
    }
  }
  Literal result(instruction.shape);
  std::vector<void*> outputs;
  void* out = nullptr;
  if (instruction.shape.IsTuple()) {
    CollectLeafPointers(result, outputs);
    out = outputs.data();
  } else if (instruction.shape.IsArray()) {
    out = result.raw().data();
  }
  function(out, inputs.data());
  return result;
}

}  // namespace kiln::interpreter
