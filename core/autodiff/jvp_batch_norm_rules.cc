// Forward-mode rule of batch-norm-training, -inference and -grad. Each is
// expanded (core/passes/batch_norm_expander.h) into the elementwise ops,
// broadcasts and reductions it computes, in a computation of its own whose
// tangent the ordinary rules give; a call of that computation gives the
// op's tangent. So the tangents are those of the formulas themselves, as
// JAX differentiates its batch normalisation written in primitives: the
// batch mean's and (biased) variance's tangents flow into the output's.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/autodiff/jvp.h"
#include "core/autodiff/jvp_rules.h"
#include "core/autodiff/rule_helpers.h"
#include "core/ir_edit.h"
#include "core/passes/batch_norm_expander.h"

namespace kiln::autodiff {
namespace {

// A computation of the emitter's module that computes `x` from parameters
// of its operands' shapes with the batch-norm op expanded.
StatusOr<const Computation*> Expanded(VjpEmitter& e, const Instruction& x) {
  Module scratch("batch_norm_expansion");
  Computation* computation = scratch.AddComputation(std::make_unique<Computation>(x.name + "_expanded"));
  std::vector<Instruction*> parameters;
  for (size_t i = 0; i < x.operands.size(); ++i) {
    parameters.push_back(AddParameter(*computation, x.operand(i)->shape, static_cast<int64_t>(i),
                                      "operand" + std::to_string(i)));
  }
  Instruction* copy = computation->AddInstruction(MakeInstruction(x.opcode, x.shape, parameters, x.attrs));
  copy->name = x.name;
  computation->set_root(copy);
  scratch.set_entry(computation);
  KILN_RETURN_IF_ERROR(BatchNormExpander().Run(scratch).status());
  return e.module().ImportComputation(*computation);
}

}  // namespace

KILN_JVP_RULE(JvpBatchNormRule) {
  KILN_ASSIGN_OR_RETURN(const Computation* expanded, Expanded(e, x));
  Computation* derivative = NewComputation(e.module(), x.name + "_jvp");
  VjpEmitter d(e, *derivative);
  auto [operands, seeds, arguments] = AddTangentCallParameters(d, x, t);
  derivative->set_root(CloneComputation(d, *expanded, operands));
  StatusOr<Tangent> found = EmitTangents(d, seeds);
  if (!found.ok()) {
    return Status(found.status().code(), found.status().message() + " (in the expansion of '" +
                                             std::string(OpcodeName(x.opcode)) + "' " + x.name + ")");
  }
  // The expansion and this computation, unused, go with the module's
  // unreachable computations.
  if (found->IsZero()) return Tangent{};
  derivative->set_root(DenseTangent(d, *found, x.shape));
  KILN_RETURN_IF_ERROR(d.status());
  Instruction* tangent = e.Add(Opcode::kCall, std::move(arguments), {}, nullptr, {derivative});
  if (!x.shape.IsTuple()) return Of(tangent);
  Tangent elements;
  for (size_t i = 0; i < x.shape.tuple_shapes().size(); ++i) {
    elements.elements.push_back(Of(e.GetTupleElement(tangent, static_cast<int64_t>(i))));
  }
  return elements;
}

}  // namespace kiln::autodiff
