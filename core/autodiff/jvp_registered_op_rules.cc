// Forward-mode rule of custom calls. A registered op (core/op_registry.h)
// has a gradient function, which builds its reverse mode: G(w) = J^T w for
// output cotangents w. Forward mode needs J v, and G is linear in w, so
// <G(w), v> = <w, J v> and J v is the gradient of w -> <G(w), v>: the
// gradient computation is inlined into a computation of its own, that
// inner product is formed, and reverse mode differentiates it with respect
// to w (at w = 0; any w gives the same). This needs the gradient
// computation itself to be differentiable, as differentiating a gradient
// twice does. The partitioner's identity annotations are handled by
// EmitTangents; other custom calls have no derivative.
#include <string>
#include <vector>

#include "core/autodiff/jvp_rules.h"
#include "core/autodiff/rule_helpers.h"
#include "core/autodiff/vjp.h"
#include "core/op_registry.h"

namespace kiln::autodiff {
namespace {

// The array leaves of a custom call's result (itself when it is an array).
std::vector<Shape> OutputShapes(const Instruction& x) {
  if (x.shape.IsTuple()) return x.shape.tuple_shapes();
  return {x.shape};
}

Status Refused(const Instruction& x, const std::string& why) {
  return Unimplemented("kiln jvp: no forward-mode rule for registered op '", x.attrs.custom_call_target,
                       "' (instruction ", x.name, "): ", why,
                       "; its reverse mode (kiln_computation_vjp) may work");
}

}  // namespace

KILN_JVP_RULE(JvpCustomCallRule) {
  std::shared_ptr<const OpDef> def = FindRegisteredOp(x.attrs.custom_call_target);
  if (def == nullptr) return JvpNoRuleError(x, RuleState::kNotDifferentiable);
  StatusOr<OpGradientComputation> gradient = BuildOpGradient(*def, x);
  if (!gradient.ok()) {
    return Status(gradient.status().code(),
                  "kiln jvp: " + gradient.status().message() +
                      " (forward mode derives the tangent from the gradient function)");
  }
  const std::vector<Shape> outputs = OutputShapes(x);
  for (const Shape& output : outputs) {
    if (!IsFloating(output.element_type())) return Refused(x, "an output is not a real float");
  }
  const Computation* reverse = e.module().ImportComputation(*gradient->module->entry());
  Computation* forward = NewComputation(e.module(), def->name + "_jvp");
  VjpEmitter d(e, *forward);
  std::vector<Instruction*> inputs;  // G's parameters: operands, outputs, output cotangents
  for (const Instruction* operand : x.operands) inputs.push_back(d.AddParameter(operand->shape, "operand"));
  for (const Shape& output : outputs) inputs.push_back(d.AddParameter(output, "output"));
  std::vector<Instruction*> cotangents;
  for (const Shape& output : outputs) {
    cotangents.push_back(d.AddParameter(output, "cotangent"));
    inputs.push_back(cotangents.back());
  }
  Instruction* transposed = CloneComputation(d, *reverse, inputs);

  // <G(w), v> over the operands that have both a gradient and a tangent.
  std::vector<Instruction*> arguments(x.operands.begin(), x.operands.end());
  for (size_t i = 0; i < outputs.size(); ++i) {
    arguments.push_back(x.shape.IsTuple() ? e.GetTupleElement(&x, static_cast<int64_t>(i)) : &x);
  }
  for (const Shape& output : outputs) arguments.push_back(e.Zeros(output));
  Instruction* product = nullptr;
  int64_t next = 0;
  for (size_t i = 0; i < x.operands.size(); ++i) {
    if (!gradient->has_gradient[i]) continue;
    Instruction* cotangent = d.GetTupleElement(transposed, next++);
    if (t[i].array == nullptr || !IsFloating(x.operand(i)->shape.element_type())) continue;
    Instruction* v = d.AddParameter(x.operand(i)->shape, "tangent");
    arguments.push_back(t[i].array);
    Instruction* term = d.ReduceSum(d.Binary(Opcode::kMultiply, cotangent, v), AllDimensions(v->shape));
    if (term->shape.element_type() != outputs[0].element_type())
      term = d.Convert(term, outputs[0].element_type());
    product = product == nullptr ? term : d.Binary(Opcode::kAdd, product, term);
  }
  if (product == nullptr) return Tangent{};  // the tangents reach no operand with a gradient
  forward->set_root(product);
  StatusOr<std::vector<Cotangent>> found = EmitBackward(d, Of(d.Full(1.0, product->shape)), cotangents);
  if (!found.ok()) {
    return Refused(x, "its gradient computation cannot be differentiated (" + found.status().message() + ")");
  }
  std::vector<Instruction*> results;
  for (size_t i = 0; i < outputs.size(); ++i) {
    results.push_back((*found)[i].array != nullptr ? (*found)[i].array : d.Zeros(outputs[i]));
  }
  forward->set_root(x.shape.IsTuple() ? d.Tuple(std::move(results)) : results[0]);
  KILN_RETURN_IF_ERROR(d.status());
  Instruction* tangent =
      e.Add(Opcode::kCall, std::move(arguments), {}, nullptr, {forward}, def->name + "_jvp");
  if (!x.shape.IsTuple()) return Of(tangent);
  Tangent elements;
  for (size_t i = 0; i < outputs.size(); ++i) {
    elements.elements.push_back(Of(e.GetTupleElement(tangent, static_cast<int64_t>(i))));
  }
  return elements;
}

}  // namespace kiln::autodiff
