// Forward-mode rules of the reductions and of the ops that reorder, with
// the conventions of their reverse-mode rules (contraction_rules.cc,
// window_rules.cc, sort_rules.cc) so both modes give one Jacobian:
// reduce with add sums the tangents; reduce with maximum (minimum) averages
// the tangents of the elements equal to the result, the initial value
// included (JAX's rule for ties); reduce-window with add sums the tangents
// over the same windows; with maximum (minimum) it passes the tangent of
// the element the window picked, the first of tied ones (a reduce-window
// over (value, tangent) pairs, as JAX's select_and_gather_add), or the
// initial value's where that is the result; sort sorts the tangents
// alongside; top-k reads the tangent at the indices it returns. Reductions
// over several operands, and with any other reducer (a product: dual
// numbers multiply without dividing, exact at zeros), fold their tangents
// along (jvp_variadic_reduction_rules.cc).
#include <limits>

#include "core/autodiff/jvp_rules.h"
#include "core/autodiff/rule_helpers.h"

namespace kiln::autodiff {
namespace {

// The dimensions of `operand` a reduce over `reduced` keeps.
std::vector<int64_t> Kept(const Shape& operand, const std::vector<int64_t>& reduced) {
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) kept.push_back(d);
  }
  return kept;
}

}  // namespace

KILN_JVP_RULE(JvpReduceRule) {
  if (x.operands.size() > 2) return JvpVariadicReduction(e, x, t);
  const std::optional<Opcode> reducer = SimpleReducer(x);
  // Any other reducer (a product, ...): the tangents fold along.
  if (!reducer || !x.shape.IsArray()) return JvpVariadicReduction(e, x, t);
  Instruction* operand = x.operand(0);
  Instruction* init = x.operand(1);
  if (*reducer == Opcode::kAdd) {
    return Of(e.Clone(x, {DenseTangent(e, t[0], operand->shape), DenseTangent(e, t[1], init->shape)}));
  }
  const std::vector<int64_t>& reduced = x.attrs.dimensions;
  const std::vector<int64_t> kept = Kept(operand->shape, reduced);
  const ElementType type = x.shape.element_type();
  Instruction* is_extreme =
      e.Compare(operand, e.BroadcastInDim(&x, operand->shape, kept), ComparisonDirection::kEq);
  Instruction* init_is_extreme = e.Compare(e.BroadcastInDim(init, x.shape, {}), &x, ComparisonDirection::kEq);
  Instruction* count = e.Binary(Opcode::kAdd, e.ReduceSum(e.Convert(is_extreme, type), reduced),
                                e.Convert(init_is_extreme, type));
  Instruction* total = nullptr;
  if (t[0].array != nullptr) {
    total = e.ReduceSum(e.Select(is_extreme, t[0].array, e.Zeros(operand->shape)), reduced);
  }
  if (t[1].array != nullptr) {
    Instruction* from_init =
        e.Select(init_is_extreme, e.BroadcastInDim(t[1].array, x.shape, {}), e.Zeros(x.shape));
    total = total == nullptr ? from_init : e.Binary(Opcode::kAdd, total, from_init);
  }
  return Of(e.Binary(Opcode::kDivide, total, count));
}

KILN_JVP_RULE(JvpReduceWindowRule) {
  if (x.operands.size() > 2) return JvpVariadicReduction(e, x, t);
  const std::optional<Opcode> reducer = SimpleReducer(x);
  // Any other reducer (a product, ...): the tangents fold along.
  if (!reducer || !x.shape.IsArray()) return JvpVariadicReduction(e, x, t);
  Instruction* operand = x.operand(0);
  Instruction* init = x.operand(1);
  if (*reducer == Opcode::kAdd) {
    // Padding and base-dilation holes hold the initial value, whose tangent
    // the clone adds as the forward adds the value.
    return Of(e.Clone(x, {DenseTangent(e, t[0], operand->shape), DenseTangent(e, t[1], init->shape)}));
  }
  if (x.shape.element_count() == 0) return Tangent{};
  const bool is_max = *reducer == Opcode::kMaximum;
  const ElementType type = operand->shape.element_type();
  const Shape scalar = Shape::Scalar(type);
  Instruction* picked = nullptr;
  if (t[0].array != nullptr) {
    // Holes and padding hold (worst value, zero tangent), which no window
    // picks over a real element.
    const double worst =
        is_max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    Attributes attrs;
    attrs.window = x.attrs.window;
    Instruction* pairs =
        e.Add(Opcode::kReduceWindow, {operand, t[0].array, e.Full(worst, scalar), e.Zeros(scalar)},
              std::move(attrs), nullptr,
              {PairChooser(e.module(), type, is_max ? ComparisonDirection::kGe : ComparisonDirection::kLe)});
    picked = e.GetTupleElement(pairs, 1);
  } else {
    picked = e.Zeros(x.shape);
  }
  // Where the initial value is the result, its tangent is.
  Instruction* init_won = e.Compare(e.BroadcastInDim(init, x.shape, {}), &x, ComparisonDirection::kEq);
  Instruction* init_tangent = DenseTangent(e, t[1], init->shape);
  return Of(e.Select(init_won, e.BroadcastInDim(init_tangent, x.shape, {}), picked));
}

KILN_JVP_RULE(JvpSortRule) {
  // The sort again with the tangents as more operands, which its comparator
  // ignores; it replaces the forward sort so that values and tangents come
  // from one permutation whatever the sort does with ties.
  const size_t count = x.operands.size();
  std::vector<Instruction*> operands(x.operands.begin(), x.operands.end());
  std::vector<ElementType> types;
  std::vector<size_t> moved;  // the operands whose tangent is sorted alongside
  for (size_t i = 0; i < count; ++i) {
    if (t[i].array == nullptr) continue;
    moved.push_back(i);
    operands.push_back(t[i].array);
    types.push_back(t[i].array->shape.element_type());
  }
  Instruction* sorted = e.Add(Opcode::kSort, std::move(operands), x.attrs, nullptr,
                              {WithIgnoredParameters(e.module(), *x.called.at(0), types, "_with_tangents")});
  if (x.shape.IsArray()) {
    e.Replace(&x, e.GetTupleElement(sorted, 0));
    return Of(e.GetTupleElement(sorted, 1));
  }
  std::vector<Instruction*> values;
  for (size_t i = 0; i < count; ++i) values.push_back(e.GetTupleElement(sorted, static_cast<int64_t>(i)));
  e.Replace(&x, e.Tuple(std::move(values)));
  Tangent tangent;
  tangent.elements.resize(count);
  for (size_t k = 0; k < moved.size(); ++k) {
    tangent.elements[moved[k]] = Of(e.GetTupleElement(sorted, static_cast<int64_t>(count + k)));
  }
  return tangent;
}

KILN_JVP_RULE(JvpTopKRule) {
  // values' tangent[..., k] = sum over i of tangent[..., i] where
  // indices[..., k] == i (one i matches).
  Instruction* operand = x.operand(0);
  Instruction* indices = e.GetTupleElement(&x, 1);
  const int64_t rank = operand->shape.rank();
  std::vector<int64_t> wide = indices->shape.dimensions();  // [..., k, n]
  wide.push_back(operand->shape.dimensions(rank - 1));
  const Shape wide_s32(ElementType::kS32, wide);
  const Shape wide_t(operand->shape.element_type(), wide);
  std::vector<int64_t> leading;
  for (int64_t d = 0; d < rank; ++d) leading.push_back(d);
  std::vector<int64_t> batch_and_last;
  for (int64_t d = 0; d + 1 < rank; ++d) batch_and_last.push_back(d);
  batch_and_last.push_back(rank);
  Attributes iota;
  iota.iota_dimension = rank;
  Instruction* positions = e.Add(Opcode::kIota, {}, std::move(iota), &wide_s32);
  Instruction* hit =
      e.Compare(e.BroadcastInDim(indices, wide_s32, leading), positions, ComparisonDirection::kEq);
  Instruction* spread = e.Select(hit, e.BroadcastInDim(t[0].array, wide_t, batch_and_last), e.Zeros(wide_t));
  Tangent tangent;
  tangent.elements = {Of(e.ReduceSum(spread, {rank})), Tangent{}};
  return tangent;
}

}  // namespace kiln::autodiff
