// The derivative rule of custom calls. A call of a registered op
// (core/op_registry.h) whose definition has a gradient function is
// differentiated by the computation that function builds (parameters: the
// operands, the outputs, their cotangents; result: the operands'
// cotangents), called from the backward pass; the pipeline inlines the
// call. Integer operands get no cotangent. Other custom calls, and
// registered ops without a gradient, have no derivative.
#include "core/autodiff/vjp_rules.h"
#include "core/op_registry.h"

namespace kiln::autodiff {

KILN_VJP_RULE(CustomCallRule) {
  std::shared_ptr<const OpDef> def = FindRegisteredOp(x.attrs.custom_call_target);
  if (def == nullptr) return NoRuleError(x, RuleState::kNotDifferentiable);
  StatusOr<OpGradientComputation> gradient = BuildOpGradient(*def, x);
  if (!gradient.ok()) return Status(gradient.status().code(), "kiln grad: " + gradient.status().message());
  std::vector<Instruction*> arguments(x.operands.begin(), x.operands.end());
  std::vector<Instruction*> outputs;
  std::vector<Instruction*> output_cotangents;
  const int64_t num_outputs = x.shape.IsTuple() ? static_cast<int64_t>(x.shape.tuple_shapes().size()) : 1;
  for (int64_t i = 0; i < num_outputs; ++i) {
    Instruction* output = x.shape.IsTuple() ? e.GetTupleElement(&x, i) : &x;
    const Cotangent* given =
        x.shape.IsTuple()
            ? (static_cast<size_t>(i) < ct.elements.size() ? &ct.elements[static_cast<size_t>(i)] : nullptr)
            : &ct;
    outputs.push_back(output);
    output_cotangents.push_back(given != nullptr && given->array != nullptr ? given->array
                                                                            : e.Zeros(output->shape));
  }
  arguments.insert(arguments.end(), outputs.begin(), outputs.end());
  arguments.insert(arguments.end(), output_cotangents.begin(), output_cotangents.end());
  Computation* callee = e.module().ImportComputation(*gradient->module->entry());
  Instruction* call = e.Add(Opcode::kCall, std::move(arguments), {}, nullptr, {callee}, def->name + "_grad");
  std::vector<Cotangent> cotangents(x.operands.size());
  int64_t next = 0;
  for (size_t i = 0; i < x.operands.size(); ++i) {
    if (!gradient->has_gradient[i]) continue;
    Instruction* cotangent = e.GetTupleElement(call, next++);
    if (IsFloating(x.operand(i)->shape.element_type())) cotangents[i] = Cotangent{cotangent, {}};
  }
  return cotangents;
}

}  // namespace kiln::autodiff
