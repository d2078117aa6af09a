// Reverse mode over straight-line programs; see vjp.h for what is covered.
// The backward pass is appended to a copy of the forward computation, so
// the rules read forward values directly; the pipeline's passes later fuse
// and drop what the gradient does not need.
#include "core/autodiff/vjp.h"

#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/autodiff/rule_helpers.h"
#include "core/autodiff/vjp_rules.h"
#include "core/identity_custom_calls.h"
#include "core/passes/call_inliner.h"
#include "core/verifier.h"

namespace kiln::autodiff {
namespace {

// Adds `contribution` to `total`, the cotangent of a value of `shape`, leaf
// by leaf. Leaves that are not floats get none: integers and predicates
// have no gradient.
Status Accumulate(VjpEmitter& e, Cotangent& total, const Cotangent& contribution, const Shape& shape,
                  const Instruction& from) {
  if (shape.IsTuple()) {
    if (contribution.elements.empty()) return OkStatus();
    if (contribution.elements.size() != shape.tuple_shapes().size()) {
      return Internal("kiln grad: the rule of '", OpcodeName(from.opcode), "' (instruction ", from.name,
                      ") gave ", contribution.elements.size(), " cotangents for an operand of shape ",
                      shape.ToString());
    }
    if (total.elements.empty()) total.elements.resize(shape.tuple_shapes().size());
    for (size_t i = 0; i < contribution.elements.size(); ++i) {
      KILN_RETURN_IF_ERROR(Accumulate(e, total.elements[i], contribution.elements[i],
                                      shape.tuple_shapes(static_cast<int64_t>(i)), from));
    }
    return OkStatus();
  }
  if (contribution.array == nullptr || !CarriesGradient(shape.element_type())) return OkStatus();
  if (!contribution.array->shape.Compatible(shape)) {
    return Internal("kiln grad: the rule of '", OpcodeName(from.opcode), "' (instruction ", from.name,
                    ") gave a cotangent of shape ", contribution.array->shape.ToString(),
                    " for an operand of shape ", shape.ToString());
  }
  total.array =
      total.array == nullptr ? contribution.array : e.Binary(Opcode::kAdd, total.array, contribution.array);
  return OkStatus();
}

// The instructions of `order` (operands first) that depend on one of `wrt`.
std::unordered_set<const Instruction*> ActiveInstructions(const std::vector<Instruction*>& order,
                                                          std::span<Instruction* const> wrt) {
  std::unordered_set<const Instruction*> active(wrt.begin(), wrt.end());
  for (const Instruction* instruction : order) {
    for (const Instruction* operand : instruction->operands) {
      if (active.contains(operand)) {
        active.insert(instruction);
        break;
      }
    }
  }
  return active;
}

Status CheckDifferentiable(const Computation& entry, int64_t number) {
  const auto count = static_cast<int64_t>(entry.parameters().size());
  if (number < 0 || number >= count) {
    return InvalidArgument("kiln grad: cannot differentiate with respect to parameter ", number, ": ENTRY '",
                           entry.name(), "' has ", count, " parameters",
                           count > 0 ? " (numbers 0 to " + std::to_string(count - 1) + ")" : std::string());
  }
  const Instruction& parameter = *entry.parameter(static_cast<size_t>(number));
  const std::string which = "parameter " + std::to_string(number) + " ('" + parameter.name + "', " +
                            parameter.shape.ToString() + ")";
  if (parameter.shape.IsTuple()) {
    return Unimplemented("kiln grad: ", which,
                         " is a tuple; gradients with respect to tuples are not supported yet");
  }
  if (!CarriesGradient(parameter.shape.element_type())) {
    return InvalidArgument(
        "kiln grad: ", which,
        " has no gradient: only f16, bf16, f32, f64, c64 and c128 parameters can be differentiated");
  }
  return OkStatus();
}

// The array leaves of `value`, tuples flattened in order.
void CollectLeaves(VjpEmitter& e, Instruction* value, std::vector<Instruction*>& leaves) {
  if (!value->shape.IsTuple()) {
    leaves.push_back(value);
    return;
  }
  for (size_t i = 0; i < value->shape.tuple_shapes().size(); ++i) {
    CollectLeaves(e, e.GetTupleElement(value, static_cast<int64_t>(i)), leaves);
  }
}

// The cotangent of a value of `shape` whose leaves' cotangents are
// `leaf_cotangents`, in order from `next`; leaves that are not floats get none.
Cotangent SeedCotangent(const Shape& shape, const std::vector<Instruction*>& leaf_cotangents, size_t& next) {
  Cotangent cotangent;
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      cotangent.elements.push_back(SeedCotangent(element, leaf_cotangents, next));
    }
    return cotangent;
  }
  Instruction* leaf = leaf_cotangents[next++];
  if (CarriesGradient(shape.element_type())) cotangent.array = leaf;
  return cotangent;
}

// The entry layout of the gradient module, when the original has one.
ProgramShape GradientLayout(const ProgramShape& original, const std::vector<Shape>& cotangent_shapes,
                            std::span<const int64_t> wrt) {
  ProgramShape layout = original;
  std::vector<Shape> results = original.result.Leaves();
  for (const Shape& shape : cotangent_shapes) {
    layout.parameters.push_back(shape);
    if (!layout.parameter_names.empty()) layout.parameter_names.push_back("cotangent");
  }
  for (int64_t number : wrt) results.push_back(original.parameters[static_cast<size_t>(number)]);
  layout.result = Shape::Tuple(std::move(results));
  return layout;
}

}  // namespace

StatusOr<std::vector<Cotangent>> EmitBackward(VjpEmitter& emitter, const Cotangent& root_cotangent,
                                              std::span<Instruction* const> wrt) {
  Computation& computation = emitter.computation();
  // Snapshot before anything is added: the backward pass appends to the computation.
  const std::vector<Instruction*> order = computation.PostOrder();
  const std::unordered_set<const Instruction*> active = ActiveInstructions(order, wrt);
  std::unordered_map<const Instruction*, Cotangent> cotangents;
  if (active.contains(computation.root())) cotangents[computation.root()] = root_cotangent;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Instruction& instruction = **it;
    if (instruction.opcode == Opcode::kParameter || !active.contains(&instruction)) continue;
    auto found = cotangents.find(&instruction);
    if (found == cotangents.end() || found->second.IsZero()) continue;
    const Cotangent cotangent = found->second;
    RuleLookup lookup = FindVjpRule(instruction.opcode);
    // Partitioner annotations (with_sharding_constraint) are their operand
    // on one device, so their cotangent is the result's.
    if (instruction.opcode == Opcode::kCustomCall &&
        IsIdentityCustomCall(instruction.attrs.custom_call_target) && instruction.operands.size() == 1 &&
        instruction.operand(0)->shape.Compatible(instruction.shape)) {
      lookup = {RuleState::kRule, IdentityRule};
    }
    if (lookup.state != RuleState::kRule) return NoRuleError(instruction, lookup.state);
    KILN_ASSIGN_OR_RETURN(std::vector<Cotangent> operand_cotangents,
                          lookup.rule(emitter, instruction, cotangent));
    KILN_RETURN_IF_ERROR(emitter.status());
    if (operand_cotangents.size() != instruction.operands.size()) {
      return Internal("kiln grad: the rule of '", OpcodeName(instruction.opcode), "' gave ",
                      operand_cotangents.size(), " cotangents for ", instruction.operands.size(),
                      " operands");
    }
    for (size_t i = 0; i < operand_cotangents.size(); ++i) {
      const Instruction* operand = instruction.operand(i);
      if (!active.contains(operand)) continue;
      KILN_RETURN_IF_ERROR(
          Accumulate(emitter, cotangents[operand], operand_cotangents[i], operand->shape, instruction));
    }
  }
  // Forward instructions a rule rewrote (a while that now counts its
  // iterations) are read through their replacements; drop them.
  if (!emitter.replaced().empty()) {
    computation.SortTopologically();
    for (const auto& [old, replacement] : emitter.replaced()) {
      if (old != computation.root() && computation.Users(old).empty()) {
        KILN_RETURN_IF_ERROR(computation.RemoveInstruction(old));
      }
    }
  }
  std::vector<Cotangent> result;
  for (const Instruction* instruction : wrt) {
    auto found = cotangents.find(instruction);
    result.push_back(found == cotangents.end() ? Cotangent{} : found->second);
  }
  return result;
}

StatusOr<std::unique_ptr<Module>> BuildVjp(const Module& module, std::span<const int64_t> wrt) {
  if (module.entry() == nullptr) return InvalidArgument("kiln grad: the module has no ENTRY computation");
  for (int64_t number : wrt) KILN_RETURN_IF_ERROR(CheckDifferentiable(*module.entry(), number));
  if (HasToken(module.entry()->root()->shape)) {
    return Unimplemented("kiln grad: ENTRY's result ", module.entry()->root()->shape.ToString(),
                         " holds a token; results with tokens are not supported yet");
  }
  std::unique_ptr<Module> gradient = module.Clone();
  gradient->set_name(module.name() + "_vjp");
  // JAX wraps functions in calls: inlined, their bodies are straight-line
  // code like the rest (the pipeline would inline them anyway).
  KILN_RETURN_IF_ERROR(CallInliner().Run(*gradient).status());
  Computation& entry = *gradient->entry();
  VjpEmitter emitter(*gradient, entry);
  Instruction* root = entry.root();
  std::vector<Instruction*> leaves;
  CollectLeaves(emitter, root, leaves);

  // One cotangent parameter per result leaf, or the constant 1 for a scalar loss.
  std::vector<Instruction*> leaf_cotangents;
  std::vector<Shape> cotangent_shapes;
  if (root->shape.IsScalar()) {
    leaf_cotangents.push_back(emitter.Full(1.0, root->shape));
  } else {
    for (const Instruction* leaf : leaves) {
      leaf_cotangents.push_back(emitter.AddParameter(leaf->shape, "cotangent"));
      cotangent_shapes.push_back(leaf_cotangents.back()->shape);
    }
  }
  size_t next = 0;
  const Cotangent root_cotangent = SeedCotangent(root->shape, leaf_cotangents, next);

  std::vector<Instruction*> wrt_parameters;
  for (int64_t number : wrt) wrt_parameters.push_back(entry.parameter(static_cast<size_t>(number)));
  KILN_ASSIGN_OR_RETURN(std::vector<Cotangent> gradients,
                        EmitBackward(emitter, root_cotangent, wrt_parameters));

  std::vector<Instruction*> results;
  for (Instruction* leaf : leaves) results.push_back(emitter.Current(leaf));
  for (size_t i = 0; i < gradients.size(); ++i) {
    Instruction* gradient_value = gradients[i].array;
    results.push_back(gradient_value != nullptr ? gradient_value : emitter.Zeros(wrt_parameters[i]->shape));
  }
  entry.set_root(emitter.Tuple(std::move(results)));
  KILN_RETURN_IF_ERROR(emitter.status());
  if (module.entry_layout())
    gradient->set_entry_layout(GradientLayout(*module.entry_layout(), cotangent_shapes, wrt));
  Status verified = VerifyModule(*gradient);
  if (!verified.ok()) return Internal("kiln grad: the gradient module is invalid: ", verified.message());
  return gradient;
}

}  // namespace kiln::autodiff
