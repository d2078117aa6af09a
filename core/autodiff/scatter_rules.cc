// The reverse-mode rule of scatter (one operand), as JAX differentiates
// scatter, scatter_add, scatter_mul, scatter_max and scatter_min. Add: the
// operand's cotangent is the result's, each update's the result's cotangent
// read back at its window; subtract (old - update) the same, negated for
// the updates. Overwrite, as JAX's scatter rule: an id per update is
// scattered alongside to learn which update each element ended with
// (repeated indices included); the operand's cotangent is zero where any
// update landed, and an update's is the result's cotangent read back where
// it was the one kept. Windows the scatter dropped because they did not
// fit get zero. Multiply: the operand's cotangent is the result's times the
// product of the updates that landed on it, an update's the result's times
// the operand and the other updates there (JAX has this rule only for
// unique indices; Kiln's is exact for repeated ones). Maximum/minimum: the
// updates equal to the result and the operand element when it equals the
// result share the cotangent equally (JAX's rule for contending values).
// Any other combiner, when no two updates land on one element: the scatter
// is the operand read back at the windows, combined with the updates
// elementwise (a map) and written over the operand, and those ops' rules
// give the cotangents; with possibly repeated indices it is refused
// (scatter_helpers.h). A scatter over several operands whose combiner
// mixes their components is treated the same way (every operand read
// back, a map per result over all of them, an overwrite per result); one
// that works component by component is n scatters of one operand
// (variadic_scatter_rules.cc).
#include <algorithm>
#include <vector>

#include "core/autodiff/rule_helpers.h"
#include "core/autodiff/scatter_helpers.h"
#include "core/autodiff/vjp_rules.h"

namespace kiln::autodiff {
namespace {

// One s32 id (from 1) per update window, repeated over the window's elements.
Instruction* UpdateIds(VjpEmitter& e, const Instruction& x) {
  const Shape& updates = x.operand(2)->shape;
  std::vector<int64_t> scatter_dims;
  std::vector<int64_t> per_window;
  int64_t count = 1;
  const std::vector<int64_t>& window_dims = x.attrs.scatter->update_window_dims;
  for (int64_t d = 0; d < updates.rank(); ++d) {
    if (std::find(window_dims.begin(), window_dims.end(), d) != window_dims.end()) continue;
    scatter_dims.push_back(d);
    per_window.push_back(updates.dimensions(d));
    count *= updates.dimensions(d);
  }
  const Shape flat(ElementType::kS32, {count});
  Attributes iota;
  Instruction* ids = e.Add(Opcode::kIota, {}, std::move(iota), &flat);
  ids = e.Binary(Opcode::kAdd, ids, e.Full(1.0, flat));
  return e.BroadcastInDim(e.Reshape(ids, per_window), Shape(ElementType::kS32, updates.dimensions()),
                          scatter_dims);
}

std::vector<Cotangent> OverwriteScatter(VjpEmitter& e, const Instruction& x, const Cotangent& ct,
                                        Instruction* fits) {
  // Which update each operand element ended with (0: none).
  const Shape ids_shape(ElementType::kS32, x.operand(0)->shape.dimensions());
  const Shape s32 = Shape::Scalar(ElementType::kS32);
  Computation* overwrite = NewComputation(e.module(), "vjp_overwrite_s32");
  AddParameter(*overwrite, s32, 0, "old");
  overwrite->set_root(AddParameter(*overwrite, s32, 1, "new"));
  Instruction* ids = UpdateIds(e, x);
  Attributes attrs = x.attrs;
  Instruction* landed = e.Add(Opcode::kScatter, {e.Zeros(ids_shape), x.operand(1), ids}, std::move(attrs),
                              nullptr, {overwrite});
  Instruction* untouched = e.Compare(landed, e.Zeros(ids_shape), ComparisonDirection::kEq);
  Instruction* operand_cotangent = e.Select(untouched, ct.array, e.Zeros(ct.array->shape));
  Instruction* kept =
      e.Binary(Opcode::kAnd, fits, e.Compare(ReadBack(e, x, landed), ids, ComparisonDirection::kEq));
  Instruction* update_cotangent = e.Select(kept, ReadBack(e, x, ct.array), e.Zeros(x.operand(2)->shape));
  return {Of(operand_cotangent), Cotangent{}, Of(update_cotangent)};
}

std::vector<Cotangent> MultiplyScatter(VjpEmitter& e, const Instruction& x, const Cotangent& ct,
                                       Instruction* fits) {
  // y = operand * P, P the product of the updates landing on an element.
  Instruction* operand = x.operand(0);
  Instruction* updates = x.operand(2);
  const Cotangent operand_cotangent =
      Of(e.Binary(Opcode::kMultiply, ct.array, ScatterLike(e, x, e.Full(1.0, operand->shape), updates)));
  Instruction* g = ReadBack(e, x, e.Binary(Opcode::kMultiply, ct.array, operand));
  Instruction* others = ProductOfOtherUpdates(e, x);
  return {operand_cotangent, Cotangent{},
          Of(e.Select(fits, e.Binary(Opcode::kMultiply, g, others), e.Zeros(updates->shape)))};
}

std::vector<Cotangent> ExtremalScatter(VjpEmitter& e, Instruction& x, const Cotangent& ct,
                                       Instruction* fits) {
  const ExtremalShares shares = ExtremalSharesOf(e, x, fits);
  Instruction* g = ReadBack(e, x, ct.array);
  Instruction* taken_back =
      e.Select(fits, e.Binary(Opcode::kMultiply, shares.operand_coefficient, g), e.Zeros(g->shape));
  return {Of(e.Binary(Opcode::kAdd, ct.array, ScatterAdd(e, x, taken_back))), Cotangent{},
          Of(e.Binary(Opcode::kMultiply, shares.update_share, g))};
}

// A combiner of any body over updates that land on distinct elements (of
// one operand, or of several mixing their components): the rules of
// overwrite, map and gather, through the expansion. Operand j's cotangent
// gathers what its overwrite passes on and what every map's result passes
// back to its windows; update j's, what every map passes to it.
StatusOr<std::vector<Cotangent>> DisjointScatterCotangents(VjpEmitter& e, Instruction& x,
                                                           const Cotangent& ct) {
  const size_t count = ScatteredCount(x);
  const DisjointScatter parts = ExpandDisjointScatter(e, x);
  std::vector<Instruction*> sums(x.operands.size(), nullptr);
  std::vector<Instruction*> at_windows(count, nullptr);
  auto accumulate = [&](Instruction*& sum, Instruction* value) {
    if (value != nullptr) sum = sum == nullptr ? value : e.Binary(Opcode::kAdd, sum, value);
  };
  for (size_t k = 0; k < count; ++k) {
    const Cotangent none;
    const Cotangent& result = count == 1 ? ct : k < ct.elements.size() ? ct.elements[k] : none;
    if (result.array == nullptr) continue;
    KILN_ASSIGN_OR_RETURN(std::vector<Cotangent> written, ScatterRule(e, *parts.overwritten[k], result));
    accumulate(sums[k], written[0].array);
    if (written[2].array == nullptr) continue;
    KILN_ASSIGN_OR_RETURN(std::vector<Cotangent> combined, MapRule(e, *parts.combined[k], written[2]));
    for (size_t j = 0; j < count; ++j) {
      accumulate(at_windows[j], combined[j].array);
      accumulate(sums[count + 1 + j], combined[count + j].array);
    }
  }
  for (size_t j = 0; j < count; ++j) {
    if (at_windows[j] == nullptr) continue;
    KILN_ASSIGN_OR_RETURN(std::vector<Cotangent> read, GatherRule(e, *parts.gathered[j], Of(at_windows[j])));
    accumulate(sums[j], read[0].array);
  }
  std::vector<Cotangent> cotangents;
  for (Instruction* sum : sums) cotangents.push_back(sum == nullptr ? Cotangent{} : Of(sum));
  return cotangents;
}

}  // namespace

KILN_VJP_RULE(ScatterRule) {
  if (x.operands.size() > 3 && !MixesComponents(x)) return VariadicScatterCotangents(e, x, ct);
  const ScatterCombiner combiner = CombinerOf(x);
  if (combiner == ScatterCombiner::kOther) {
    if (!UpdatesAreDisjoint(x)) return RepeatedIndicesRefusal(x, "grad");
    return DisjointScatterCotangents(e, x, ct);
  }
  KILN_ASSIGN_OR_RETURN(Instruction * fits, WindowsThatFit(e, x));
  Instruction* zero_updates = e.Zeros(x.operand(2)->shape);
  switch (combiner) {
    case ScatterCombiner::kAdd:
    case ScatterCombiner::kSubtract: {
      Instruction* read = ReadBack(e, x, ct.array);
      if (combiner == ScatterCombiner::kSubtract) read = e.Unary(Opcode::kNegate, read);
      return std::vector<Cotangent>{ct, Cotangent{}, Of(e.Select(fits, read, zero_updates))};
    }
    case ScatterCombiner::kMultiply: return MultiplyScatter(e, x, ct, fits);
    case ScatterCombiner::kExtremal: return ExtremalScatter(e, x, ct, fits);
    case ScatterCombiner::kOverwrite: return OverwriteScatter(e, x, ct, fits);
    case ScatterCombiner::kOther: break;
  }
  return Internal("kiln grad: scatter combiner of instruction ", x.name);
}

}  // namespace kiln::autodiff
