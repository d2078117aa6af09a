// Both modes' rules of a scatter over several operands whose combiner works
// component by component (its result k reads only its parameters k and
// n + k, as JAX's scatters of several arrays at once do). Such a scatter is
// n scatters of one operand each, sharing the indices; each is built again
// with its component of the combiner and differentiated by the rule of one
// operand (scatter_rules.cc, jvp_scatter_rules.cc), so the combiners those
// cover are covered here. A combiner that mixes components
// (MixesComponents, scatter_helpers.h) never reaches these rules: the
// one-operand rules' general-combiner expansion takes it over n operands.
#include <string>
#include <unordered_map>
#include <vector>

#include "core/autodiff/jvp_rules.h"
#include "core/autodiff/rule_helpers.h"
#include "core/autodiff/vjp_rules.h"
#include "core/ir_edit.h"

namespace kiln::autodiff {
namespace {

// Component `k` of the combiner of `x` (over `count` operands) as a
// computation of two parameters, or null when it reads other parameters.
Computation* Component(VjpEmitter& e, const Instruction& x, size_t count, size_t k) {
  const Computation& combiner = *x.called.at(0);
  const Instruction* root = combiner.root();
  if (root == nullptr || root->opcode != Opcode::kTuple || root->operands.size() != count) return nullptr;
  const Shape scalar = Shape::Scalar(x.operand(k)->shape.element_type());
  Computation* component = NewComputation(e.module(), combiner.name() + "_" + std::to_string(k));
  Instruction* first = AddParameter(*component, scalar, 0, "accumulated");
  Instruction* second = AddParameter(*component, scalar, 1, "update");
  VjpEmitter c(e, *component);
  std::unordered_map<const Instruction*, Instruction*> copies;
  for (const Instruction* instruction : combiner.PostOrder()) {
    if (instruction->opcode == Opcode::kParameter) {
      const auto number = static_cast<size_t>(instruction->attrs.parameter_number);
      copies[instruction] = number == k ? first : number == count + k ? second : nullptr;
      continue;
    }
    if (instruction == root) break;
    std::vector<Instruction*> operands;
    bool reads_others = false;
    for (const Instruction* operand : instruction->operands) {
      operands.push_back(copies.at(operand));
      reads_others = reads_others || operands.back() == nullptr;
    }
    copies[instruction] = reads_others ? nullptr : c.Clone(*instruction, std::move(operands));
  }
  Instruction* result = copies.at(root->operand(k));
  if (result == nullptr) return nullptr;
  component->set_root(result);
  return component;
}

// Scatter `k` of the scatters `x` is made of, added to the emitter's computation.
StatusOr<Instruction*> SingleScatter(VjpEmitter& e, const Instruction& x, size_t k, const char* mode) {
  const size_t count = (x.operands.size() - 1) / 2;
  Computation* component = Component(e, x, count, k);
  if (component == nullptr) {
    return Unimplemented("kiln ", mode,
                         ": no derivative rule yet for 'scatter' over several operands whose combiner's "
                         "result ",
                         k, " reads other components (instruction ", x.name, ")");
  }
  return e.Add(Opcode::kScatter, {x.operand(k), x.operand(count), x.operand(count + 1 + k)}, x.attrs, nullptr,
               {component}, x.name + "_" + std::to_string(k));
}

}  // namespace

StatusOr<std::vector<Cotangent>> VariadicScatterCotangents(VjpEmitter& e, Instruction& x,
                                                           const Cotangent& ct) {
  const size_t count = (x.operands.size() - 1) / 2;
  std::vector<Cotangent> result(x.operands.size());
  for (size_t k = 0; k < count; ++k) {
    if (k >= ct.elements.size() || ct.elements[k].array == nullptr) continue;
    KILN_ASSIGN_OR_RETURN(Instruction * single, SingleScatter(e, x, k, "grad"));
    KILN_ASSIGN_OR_RETURN(std::vector<Cotangent> found, ScatterRule(e, *single, ct.elements[k]));
    result[k] = found[0];
    result[count + 1 + k] = found[2];
  }
  return result;
}

StatusOr<Tangent> JvpVariadicScatter(VjpEmitter& e, Instruction& x, std::span<const Tangent> t) {
  const size_t count = (x.operands.size() - 1) / 2;
  Tangent tangent;
  tangent.elements.resize(count);
  for (size_t k = 0; k < count; ++k) {
    if (t[k].IsZero() && t[count + 1 + k].IsZero()) continue;
    KILN_ASSIGN_OR_RETURN(Instruction * single, SingleScatter(e, x, k, "jvp"));
    const Tangent single_tangents[] = {t[k], Tangent{}, t[count + 1 + k]};
    KILN_ASSIGN_OR_RETURN(tangent.elements[k], JvpScatterRule(e, *single, single_tangents));
  }
  return tangent;
}

}  // namespace kiln::autodiff
