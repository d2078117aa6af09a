// The forward-mode rule of scatter (one operand), the same derivatives as
// reverse mode's (scatter_rules.cc), so <w, J v> = <J^T w, v> holds with
// repeated indices and ties. Add, subtract and overwrite are linear in
// (operand, updates), overwrite keeping the update the forward scatter
// keeps since the indices are the same: the tangent is the same scatter of
// the tangents. Multiply: y = x P, P the product of the updates landing on
// an element, so dy = scatter_mul(dx, updates) + x times the sum over those
// updates of du times the product of the others (exact with zeros).
// Maximum/minimum: JAX's scatter_max/scatter_min rule, the tangents of the
// updates equal to the result and of the operand element when it equals
// the result averaged. Any other combiner, when no two updates land on one
// element: the tangent of the expansion (read back, map, overwrite); with
// possibly repeated indices it is refused (scatter_helpers.h). So is a
// scatter over several operands whose combiner mixes their components
// (every operand read back, a map per result, an overwrite per result).
#include <vector>

#include "core/autodiff/jvp_rules.h"
#include "core/autodiff/rule_helpers.h"
#include "core/autodiff/scatter_helpers.h"

namespace kiln::autodiff {
namespace {

// `x` over the tangents of its operand and updates (zeros where they have
// none), its indices as they are.
Instruction* ScatterOverTangents(VjpEmitter& e, Instruction& x, std::span<const Tangent> t) {
  return e.Clone(x, {DenseTangent(e, t[0], x.operand(0)->shape), x.operand(1),
                     DenseTangent(e, t[2], x.operand(2)->shape)});
}

Instruction* SumOfPresent(VjpEmitter& e, Instruction* a, Instruction* b) {
  if (a == nullptr) return b;
  return b == nullptr ? a : e.Binary(Opcode::kAdd, a, b);
}

Tangent MultiplyScatterTangent(VjpEmitter& e, Instruction& x, std::span<const Tangent> t) {
  Instruction* from_operand = t[0].array == nullptr ? nullptr : ScatterLike(e, x, t[0].array, x.operand(2));
  Instruction* from_updates = nullptr;
  if (t[2].array != nullptr) {
    Instruction* each = e.Binary(Opcode::kMultiply, t[2].array, ProductOfOtherUpdates(e, x));
    from_updates = e.Binary(Opcode::kMultiply, x.operand(0), ScatterAdd(e, x, each));
  }
  return Of(SumOfPresent(e, from_operand, from_updates));
}

StatusOr<Tangent> ExtremalScatterTangent(VjpEmitter& e, Instruction& x, std::span<const Tangent> t) {
  KILN_ASSIGN_OR_RETURN(Instruction * fits, WindowsThatFit(e, x));
  const ExtremalShares shares = ExtremalSharesOf(e, x, fits);
  Instruction* moved = nullptr;
  if (t[0].array != nullptr) {
    Instruction* taken = e.Binary(Opcode::kMultiply, shares.operand_coefficient, ReadBack(e, x, t[0].array));
    moved = e.Select(fits, taken, e.Zeros(taken->shape));
  }
  if (t[2].array != nullptr)
    moved = SumOfPresent(e, moved, e.Binary(Opcode::kMultiply, shares.update_share, t[2].array));
  return Of(SumOfPresent(e, t[0].array, ScatterAdd(e, x, moved)));
}

// A combiner of any body over updates that land on distinct elements (of
// one operand, or of several mixing their components): the rules of
// gather, map and overwrite, through the expansion.
StatusOr<Tangent> DisjointScatterTangent(VjpEmitter& e, Instruction& x, std::span<const Tangent> t) {
  const size_t count = ScatteredCount(x);
  const DisjointScatter parts = ExpandDisjointScatter(e, x);
  std::vector<Tangent> map_tangents(2 * count);
  for (size_t j = 0; j < count; ++j) {
    if (t[j].array != nullptr) map_tangents[j] = Of(ReadBack(e, x, t[j].array));
    map_tangents[count + j] = t[count + 1 + j];
  }
  Tangent tangent;
  tangent.elements.resize(count);
  for (size_t k = 0; k < count; ++k) {
    KILN_ASSIGN_OR_RETURN(Tangent combined, JvpMapRule(e, *parts.combined[k], map_tangents));
    if (t[k].IsZero() && combined.IsZero()) continue;
    const Tangent written[] = {t[k], Tangent{}, combined};
    tangent.elements[k] = Of(ScatterOverTangents(e, *parts.overwritten[k], written));
  }
  if (count == 1) return tangent.elements[0];
  return tangent;
}

}  // namespace

KILN_JVP_RULE(JvpScatterRule) {
  if (x.operands.size() > 3 && !MixesComponents(x)) return JvpVariadicScatter(e, x, t);
  switch (CombinerOf(x)) {
    case ScatterCombiner::kAdd:
    case ScatterCombiner::kSubtract:
    case ScatterCombiner::kOverwrite: return Of(ScatterOverTangents(e, x, t));
    case ScatterCombiner::kMultiply: return MultiplyScatterTangent(e, x, t);
    case ScatterCombiner::kExtremal: return ExtremalScatterTangent(e, x, t);
    case ScatterCombiner::kOther: break;
  }
  if (!UpdatesAreDisjoint(x)) return RepeatedIndicesRefusal(x, "jvp");
  return DisjointScatterTangent(e, x, t);
}

}  // namespace kiln::autodiff
