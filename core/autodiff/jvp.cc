// Forward mode over a computation; see jvp.h for what is covered. The
// tangents are added to a copy of the forward computation, so the rules
// read forward values directly; the pipeline's passes later fuse and drop
// what is not needed.
#include "core/autodiff/jvp.h"

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/autodiff/jvp_rules.h"
#include "core/autodiff/rule_helpers.h"
#include "core/identity_custom_calls.h"
#include "core/passes/call_inliner.h"
#include "core/verifier.h"

namespace kiln::autodiff {
namespace {

// `t` kept only where `shape` has float leaves of the same shape; a rule's
// tangent for an integer or predicate value is dropped (no tangent, as JAX's
// float0). A leaf of another shape is a bug of the rule.
Status Sanitize(Tangent& t, const Shape& shape, const Instruction& from) {
  if (shape.IsTuple()) {
    if (t.array != nullptr) {
      return Internal("kiln jvp: the rule of '", OpcodeName(from.opcode), "' (instruction ", from.name,
                      ") gave an array tangent for a value of shape ", shape.ToString());
    }
    if (t.elements.empty()) return OkStatus();
    if (t.elements.size() != shape.tuple_shapes().size()) {
      return Internal("kiln jvp: the rule of '", OpcodeName(from.opcode), "' (instruction ", from.name,
                      ") gave ", t.elements.size(), " tangents for a value of shape ", shape.ToString());
    }
    for (size_t i = 0; i < t.elements.size(); ++i) {
      KILN_RETURN_IF_ERROR(Sanitize(t.elements[i], shape.tuple_shapes(static_cast<int64_t>(i)), from));
    }
    if (t.IsZero()) t.elements.clear();
    return OkStatus();
  }
  if (!t.elements.empty()) {
    return Internal("kiln jvp: the rule of '", OpcodeName(from.opcode), "' (instruction ", from.name,
                    ") gave a tuple tangent for a value of shape ", shape.ToString());
  }
  if (t.array == nullptr) return OkStatus();
  if (!CarriesGradient(shape.element_type())) {
    t.array = nullptr;
    return OkStatus();
  }
  if (!t.array->shape.Compatible(shape)) {
    return Internal("kiln jvp: the rule of '", OpcodeName(from.opcode), "' (instruction ", from.name,
                    ") gave a tangent of shape ", t.array->shape.ToString(), " for a value of shape ",
                    shape.ToString());
  }
  return OkStatus();
}

Status CheckDifferentiable(const Computation& entry, int64_t number) {
  const auto count = static_cast<int64_t>(entry.parameters().size());
  if (number < 0 || number >= count) {
    return InvalidArgument("kiln jvp: cannot differentiate with respect to parameter ", number, ": ENTRY '",
                           entry.name(), "' has ", count, " parameters",
                           count > 0 ? " (numbers 0 to " + std::to_string(count - 1) + ")" : std::string());
  }
  const Instruction& parameter = *entry.parameter(static_cast<size_t>(number));
  const std::string which = "parameter " + std::to_string(number) + " ('" + parameter.name + "', " +
                            parameter.shape.ToString() + ")";
  if (parameter.shape.IsTuple()) {
    return Unimplemented("kiln jvp: ", which, " is a tuple; tangents of tuples are not supported yet");
  }
  // A complex parameter's tangent is complex: the rules are linear over the
  // reals, so J v is the derivative along v whatever its real and imaginary
  // parts.
  if (!CarriesGradient(parameter.shape.element_type())) {
    return InvalidArgument(
        "kiln jvp: ", which,
        " has no tangent: only f16, bf16, f32, f64, c64 and c128 parameters can be differentiated");
  }
  return OkStatus();
}

// Whether a value of `shape` has a leaf that carries a tangent (a real or
// complex float).
bool HasTangentLeaf(const Shape& shape) {
  if (!shape.IsTuple()) return CarriesGradient(shape.element_type());
  for (const Shape& element : shape.tuple_shapes()) {
    if (HasTangentLeaf(element)) return true;
  }
  return false;
}

// The array leaves of `value` and of its tangent `t`, tuples flattened in
// order; a leaf's tangent is zeros where it has none.
void CollectLeaves(VjpEmitter& e, Instruction* value, const Tangent& t, std::vector<Instruction*>& leaves,
                   std::vector<Instruction*>& tangents) {
  if (!value->shape.IsTuple()) {
    leaves.push_back(value);
    tangents.push_back(DenseTangent(e, t, value->shape));
    return;
  }
  for (size_t i = 0; i < value->shape.tuple_shapes().size(); ++i) {
    CollectLeaves(e, e.GetTupleElement(value, static_cast<int64_t>(i)),
                  i < t.elements.size() ? t.elements[i] : Tangent{}, leaves, tangents);
  }
}

// The entry layout of the derivative module, when the original has one.
ProgramShape JvpLayout(const ProgramShape& original, std::span<const int64_t> wrt) {
  ProgramShape layout = original;
  for (int64_t number : wrt) {
    layout.parameters.push_back(original.parameters[static_cast<size_t>(number)]);
    if (!layout.parameter_names.empty()) layout.parameter_names.push_back("tangent");
  }
  std::vector<Shape> results = original.result.Leaves();
  const size_t count = results.size();
  for (size_t i = 0; i < count; ++i) results.push_back(results[i]);
  layout.result = Shape::Tuple(std::move(results));
  return layout;
}

}  // namespace

Instruction* DenseTangent(VjpEmitter& e, const Tangent& t, const Shape& shape) {
  if (!shape.IsTuple()) {
    if (t.array != nullptr && CarriesGradient(shape.element_type())) return t.array;
    return e.Zeros(shape);
  }
  if (t.elements.empty()) return e.ZerosOf(shape);
  std::vector<Instruction*> elements;
  for (size_t i = 0; i < shape.tuple_shapes().size(); ++i) {
    elements.push_back(DenseTangent(e, t.elements[i], shape.tuple_shapes(static_cast<int64_t>(i))));
  }
  return e.Tuple(std::move(elements));
}

TangentCallParameters AddTangentCallParameters(VjpEmitter& d, const Instruction& x,
                                               std::span<const Tangent> t) {
  TangentCallParameters frame;
  for (const Instruction* operand : x.operands)
    frame.operands.push_back(d.AddParameter(operand->shape, "operand"));
  frame.arguments.assign(x.operands.begin(), x.operands.end());
  for (size_t i = 0; i < frame.operands.size(); ++i) {
    if (t[i].array == nullptr) continue;
    frame.seeds.emplace_back(frame.operands[i], Of(d.AddParameter(frame.operands[i]->shape, "tangent")));
    frame.arguments.push_back(t[i].array);
  }
  return frame;
}

StatusOr<Tangent> EmitTangents(VjpEmitter& emitter, std::span<const std::pair<Instruction*, Tangent>> seeds) {
  Computation& computation = emitter.computation();
  // Snapshot before anything is added: the tangents are added to the computation.
  const std::vector<Instruction*> order = computation.PostOrder();
  Instruction* const root = computation.root();
  std::unordered_map<const Instruction*, Tangent> tangents;
  for (const auto& [instruction, tangent] : seeds) {
    Tangent seed = tangent;
    KILN_RETURN_IF_ERROR(Sanitize(seed, instruction->shape, *instruction));
    if (!seed.IsZero()) tangents[instruction] = std::move(seed);
  }
  std::vector<Tangent> operand_tangents;
  for (Instruction* instruction : order) {
    if (tangents.contains(instruction)) continue;  // a seed
    operand_tangents.clear();
    bool reached = false;
    for (const Instruction* operand : instruction->operands) {
      auto found = tangents.find(operand);
      operand_tangents.push_back(found == tangents.end() ? Tangent{} : found->second);
      reached = reached || found != tangents.end();
    }
    // A result with no float or complex leaf has no tangent (JAX's float0):
    // a comparison, a conversion or bit cast to integers ends the tangent.
    if (!reached || !HasTangentLeaf(instruction->shape)) continue;
    JvpRuleLookup lookup = FindJvpRule(instruction->opcode);
    // Partitioner annotations (with_sharding_constraint) are their operand
    // on one device, so their tangent is the operand's.
    if (instruction->opcode == Opcode::kCustomCall &&
        IsIdentityCustomCall(instruction->attrs.custom_call_target) && instruction->operands.size() == 1 &&
        instruction->operand(0)->shape.Compatible(instruction->shape)) {
      lookup = {RuleState::kRule, JvpIdentityRule};
    }
    if (lookup.state != RuleState::kRule) return JvpNoRuleError(*instruction, lookup.state);
    KILN_ASSIGN_OR_RETURN(Tangent tangent, lookup.rule(emitter, *instruction, operand_tangents));
    KILN_RETURN_IF_ERROR(emitter.status());
    KILN_RETURN_IF_ERROR(Sanitize(tangent, instruction->shape, *instruction));
    if (tangent.IsZero()) continue;
    // Reads of an instruction a rule replaced read the replacement now.
    Instruction* current = emitter.Current(instruction);
    if (current != instruction) tangents[current] = tangent;
    tangents[instruction] = std::move(tangent);
  }
  // Forward instructions a rule replaced (a while now carrying tangents)
  // are read through their replacements; drop them.
  if (!emitter.replaced().empty()) {
    computation.SortTopologically();
    for (const auto& [old, replacement] : emitter.replaced()) {
      if (old != computation.root() && computation.Users(old).empty()) {
        KILN_RETURN_IF_ERROR(computation.RemoveInstruction(old));
      }
    }
  }
  auto found = tangents.find(root);
  return found == tangents.end() ? Tangent{} : found->second;
}

StatusOr<std::unique_ptr<Module>> BuildJvp(const Module& module, std::span<const int64_t> wrt) {
  if (module.entry() == nullptr) return InvalidArgument("kiln jvp: the module has no ENTRY computation");
  std::unordered_set<int64_t> seen;
  for (size_t i = 0; i < wrt.size(); ++i) {
    KILN_RETURN_IF_ERROR(CheckDifferentiable(*module.entry(), wrt[i]));
    if (!seen.insert(wrt[i]).second) {
      return InvalidArgument("kiln jvp: wrt[", i, "] repeats parameter ", wrt[i],
                             "; name each parameter once");
    }
  }
  if (HasToken(module.entry()->root()->shape)) {
    return Unimplemented("kiln jvp: ENTRY's result ", module.entry()->root()->shape.ToString(),
                         " holds a token; results with tokens are not supported yet");
  }
  std::unique_ptr<Module> derivative = module.Clone();
  derivative->set_name(module.name() + "_jvp");
  // JAX wraps functions in calls: inlined, their bodies are straight-line
  // code like the rest (the pipeline would inline them anyway).
  KILN_RETURN_IF_ERROR(CallInliner().Run(*derivative).status());
  Computation& entry = *derivative->entry();
  VjpEmitter emitter(*derivative, entry);
  std::vector<std::pair<Instruction*, Tangent>> seeds;
  for (int64_t number : wrt) {
    Instruction* parameter = entry.parameter(static_cast<size_t>(number));
    seeds.emplace_back(parameter, Tangent{emitter.AddParameter(parameter->shape, "tangent"), {}});
  }
  KILN_ASSIGN_OR_RETURN(Tangent root_tangent, EmitTangents(emitter, seeds));
  std::vector<Instruction*> leaves;
  std::vector<Instruction*> leaf_tangents;
  CollectLeaves(emitter, entry.root(), root_tangent, leaves, leaf_tangents);
  leaves.insert(leaves.end(), leaf_tangents.begin(), leaf_tangents.end());
  entry.set_root(emitter.Tuple(std::move(leaves)));
  KILN_RETURN_IF_ERROR(emitter.status());
  // Loop bodies tried while a loop's tangents grew are left unused.
  derivative->RemoveUnreachableComputations();
  if (module.entry_layout()) derivative->set_entry_layout(JvpLayout(*module.entry_layout(), wrt));
  Status verified = VerifyModule(*derivative);
  if (!verified.ok()) return Internal("kiln jvp: the derivative module is invalid: ", verified.message());
  return derivative;
}

}  // namespace kiln::autodiff
