// map's rules in both modes. map applies a scalar computation to each
// element, so its derivative is its body's, differentiated as an
// elementwise function of arrays: the body is lifted (each scalar op
// applied to whole arrays of the map's dimensions) into a computation of
// its own, which the ordinary rules differentiate, and the map's
// cotangents or tangent come from a call of that computation.
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/autodiff/jvp.h"
#include "core/autodiff/jvp_rules.h"
#include "core/autodiff/rule_helpers.h"
#include "core/autodiff/vjp.h"
#include "core/autodiff/vjp_rules.h"

namespace kiln::autodiff {
namespace {

// Copies the body of `map` into the emitter's computation with every scalar
// op applied to arrays of the map's dimensions, its parameters reading
// `arguments` (arrays of the map's operands' shapes); returns the lifted
// root. Bodies of elementwise ops, constants, scalar broadcasts, reshapes
// and copies, and nested maps, lift; any other op is refused by name.
StatusOr<Instruction*> LiftMapBody(VjpEmitter& e, const Instruction& map,
                                   const std::vector<Instruction*>& arguments) {
  const std::vector<int64_t>& dimensions = map.shape.dimensions();
  std::unordered_map<const Instruction*, Instruction*> lifted;
  for (const Instruction* instruction : map.called[0]->PostOrder()) {
    const Opcode opcode = instruction->opcode;
    if (opcode == Opcode::kParameter) {
      lifted[instruction] = arguments.at(static_cast<size_t>(instruction->attrs.parameter_number));
      continue;
    }
    if (!instruction->shape.IsScalar()) {
      return Unimplemented("kiln autodiff: the body of map '", map.name, "' computes ",
                           instruction->shape.ToString(), " (instruction ", instruction->name,
                           "); only bodies of scalar values are differentiated");
    }
    const Shape array(instruction->shape.element_type(), dimensions);
    std::vector<Instruction*> operands;
    for (const Instruction* operand : instruction->operands) operands.push_back(lifted.at(operand));
    if (opcode == Opcode::kConstant) {
      lifted[instruction] = e.BroadcastInDim(e.Clone(*instruction, {}), array, {});
    } else if (opcode == Opcode::kBroadcast || opcode == Opcode::kReshape || opcode == Opcode::kCopy) {
      lifted[instruction] = operands[0];  // scalar to scalar: the value itself
    } else if (opcode == Opcode::kMap) {
      Attributes attrs = instruction->attrs;
      attrs.dimensions = AllDimensions(array);
      lifted[instruction] = e.Add(opcode, std::move(operands), std::move(attrs), &array, instruction->called);
    } else if (HasTraits(opcode, OpTrait::kElementwise)) {
      lifted[instruction] =
          e.Add(opcode, std::move(operands), instruction->attrs, &array, instruction->called);
    } else {
      return Unimplemented("kiln autodiff: the body of map '", map.name, "' applies '", OpcodeName(opcode),
                           "' (instruction ", instruction->name,
                           "), which is not elementwise; only elementwise bodies are differentiated");
    }
  }
  return lifted.at(map.called[0]->root());
}

// The status of differentiating `map`'s lifted body, saying where it was.
Status InMapBody(const Status& status, const Instruction& map) {
  return Status(status.code(), status.message() + " (in the body of map '" + map.name + "')");
}

}  // namespace

KILN_VJP_RULE(MapRule) {
  Computation* backward = NewComputation(e.module(), x.called[0]->name() + "_vjp");
  VjpEmitter b(e, *backward);
  std::vector<Instruction*> operands;
  for (const Instruction* operand : x.operands) operands.push_back(b.AddParameter(operand->shape, "operand"));
  Instruction* cotangent = b.AddParameter(x.shape, "cotangent");
  KILN_ASSIGN_OR_RETURN(Instruction * root, LiftMapBody(b, x, operands));
  backward->set_root(root);
  StatusOr<std::vector<Cotangent>> found = EmitBackward(b, Of(cotangent), operands);
  if (!found.ok()) return InMapBody(found.status(), x);
  std::vector<Instruction*> results;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!CarriesGradient(operands[i]->shape.element_type())) continue;
    Instruction* gradient = (*found)[i].array;
    results.push_back(gradient != nullptr ? gradient : b.Zeros(operands[i]->shape));
  }
  backward->set_root(b.Tuple(std::move(results)));
  KILN_RETURN_IF_ERROR(b.status());

  std::vector<Instruction*> arguments(x.operands.begin(), x.operands.end());
  arguments.push_back(ct.array);
  Instruction* gradients = e.Add(Opcode::kCall, std::move(arguments), {}, nullptr, {backward});
  std::vector<Cotangent> result;
  int64_t next = 0;
  for (const Instruction* operand : x.operands) {
    result.push_back(CarriesGradient(operand->shape.element_type()) ? Of(e.GetTupleElement(gradients, next++))
                                                                    : Cotangent{});
  }
  return result;
}

KILN_JVP_RULE(JvpMapRule) {
  Computation* forward = NewComputation(e.module(), x.called[0]->name() + "_jvp");
  VjpEmitter d(e, *forward);
  auto [operands, seeds, arguments] = AddTangentCallParameters(d, x, t);
  KILN_ASSIGN_OR_RETURN(Instruction * root, LiftMapBody(d, x, operands));
  forward->set_root(root);
  StatusOr<Tangent> found = EmitTangents(d, seeds);
  if (!found.ok()) return InMapBody(found.status(), x);
  // A body whose result does not depend on the differentiated operands (an
  // unused computation is dropped with the module's unreachable ones).
  if (found->array == nullptr) return Tangent{};
  forward->set_root(found->array);
  KILN_RETURN_IF_ERROR(d.status());
  return Of(e.Add(Opcode::kCall, std::move(arguments), {}, nullptr, {forward}));
}

}  // namespace kiln::autodiff
