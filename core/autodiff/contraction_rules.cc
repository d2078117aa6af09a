// Derivative rules of the ops that sum: reduce (with an add, maximum or
// minimum reducer; others go to reduction_tree_rules.cc) and dot_general (both operands, any batch and
// contracting dimensions).
#include <algorithm>

#include "core/autodiff/rule_helpers.h"
#include "core/autodiff/vjp_rules.h"
#include "core/dot_dimensions.h"

namespace kiln::autodiff {
namespace {

// Positions of `dimensions` after sorting them: the order a dot_general
// leaves free dimensions in.
int64_t RankAmongSorted(std::vector<int64_t> dimensions, int64_t dimension) {
  std::sort(dimensions.begin(), dimensions.end());
  return std::find(dimensions.begin(), dimensions.end(), dimension) - dimensions.begin();
}

// The cotangent of one dot operand ("mine"), given the other operand: the
// result's cotangent contracted with the other operand over the other's
// free dimensions, batch dimensions kept; then transposed into my order.
// `mine_first` says whether my free dimensions come first in the result.
Instruction* DotOperandCotangent(VjpEmitter& e, const Instruction& dot, Instruction* g, bool mine_first) {
  const DotDimensionNumbers& numbers = dot.attrs.dot;
  const Instruction* mine = dot.operand(mine_first ? 0 : 1);
  Instruction* other = dot.operand(mine_first ? 1 : 0);
  const auto& my_batch = mine_first ? numbers.lhs_batch_dimensions : numbers.rhs_batch_dimensions;
  const auto& my_contracting =
      mine_first ? numbers.lhs_contracting_dimensions : numbers.rhs_contracting_dimensions;
  const auto& other_batch = mine_first ? numbers.rhs_batch_dimensions : numbers.lhs_batch_dimensions;
  const auto& other_contracting =
      mine_first ? numbers.rhs_contracting_dimensions : numbers.lhs_contracting_dimensions;
  const std::vector<int64_t> my_free = DotFreeDimensions(mine->shape.rank(), my_batch, my_contracting);
  const std::vector<int64_t> other_free =
      DotFreeDimensions(other->shape.rank(), other_batch, other_contracting);
  const auto batch_count = static_cast<int64_t>(my_batch.size());
  // The dot's result: batch, lhs free, rhs free.
  const int64_t other_free_start = batch_count + (mine_first ? static_cast<int64_t>(my_free.size()) : 0);

  Attributes attrs;
  attrs.operand_precision = dot.attrs.operand_precision;
  DotDimensionNumbers& back = *attrs.dot;
  for (int64_t b = 0; b < batch_count; ++b) back.lhs_batch_dimensions.push_back(b);
  back.rhs_batch_dimensions = other_batch;
  for (size_t i = 0; i < other_free.size(); ++i) {
    back.lhs_contracting_dimensions.push_back(other_free_start + static_cast<int64_t>(i));
    back.rhs_contracting_dimensions.push_back(other_free[i]);
  }
  Instruction* g_typed = e.Convert(g, other->shape.element_type());
  Instruction* product = e.Add(Opcode::kDot, {g_typed, other}, std::move(attrs));
  // product: batch, my free (in order), the other's contracting dimensions in
  // increasing order (each paired with one of my contracting dimensions).
  std::vector<int64_t> permutation(static_cast<size_t>(mine->shape.rank()));
  for (int64_t b = 0; b < batch_count; ++b)
    permutation[static_cast<size_t>(my_batch[static_cast<size_t>(b)])] = b;
  for (size_t i = 0; i < my_free.size(); ++i) {
    permutation[static_cast<size_t>(my_free[i])] = batch_count + static_cast<int64_t>(i);
  }
  const int64_t contracted_start = batch_count + static_cast<int64_t>(my_free.size());
  for (size_t j = 0; j < my_contracting.size(); ++j) {
    permutation[static_cast<size_t>(my_contracting[j])] =
        contracted_start + RankAmongSorted(other_contracting, other_contracting[j]);
  }
  return e.Convert(e.Transpose(product, std::move(permutation)), mine->shape.element_type());
}

}  // namespace

KILN_VJP_RULE(ReduceRule) {
  if (x.operands.size() > 2) return VariadicReduceCotangents(e, x, ct);
  const std::optional<Opcode> reducer = SimpleReducer(x);
  // Any other reducer (a product, ...): a tree of its applications.
  if (!reducer || !x.shape.IsArray()) return ReductionTreeCotangents(e, x, ct);
  Instruction* operand = x.operand(0);
  Instruction* init = x.operand(1);
  Instruction* g = ct.array;
  const std::vector<int64_t>& reduced = x.attrs.dimensions;
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < operand->shape.rank(); ++d) {
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) kept.push_back(d);
  }
  if (*reducer == Opcode::kAdd) {
    // Every operand element adds once to its output element, and the initial
    // value once to every output element.
    return std::vector<Cotangent>{Of(e.BroadcastInDim(g, operand->shape, kept)),
                                  Of(e.ReduceSum(g, AllDimensions(g->shape)))};
  }
  // Maximum and minimum: the cotangent is shared equally among the elements
  // equal to the result (JAX's rule for ties), the initial value included.
  Instruction* y = &x;
  const ElementType type = x.shape.element_type();
  Instruction* zero = e.Zeros(operand->shape);
  Instruction* is_extreme =
      e.Compare(operand, e.BroadcastInDim(y, operand->shape, kept), ComparisonDirection::kEq);
  Instruction* init_is_extreme = e.Compare(e.BroadcastInDim(init, x.shape, {}), y, ComparisonDirection::kEq);
  Instruction* count = e.Binary(Opcode::kAdd, e.ReduceSum(e.Convert(is_extreme, type), reduced),
                                e.Convert(init_is_extreme, type));
  Instruction* share = e.Binary(Opcode::kDivide, g, count);
  Instruction* operand_cotangent = e.Select(is_extreme, e.BroadcastInDim(share, operand->shape, kept), zero);
  Instruction* init_cotangent =
      e.ReduceSum(e.Select(init_is_extreme, share, e.Zeros(x.shape)), AllDimensions(x.shape));
  return std::vector<Cotangent>{Of(operand_cotangent), Of(init_cotangent)};
}

KILN_VJP_RULE(DotRule) {
  return std::vector<Cotangent>{Of(DotOperandCotangent(e, x, ct.array, /*mine_first=*/true)),
                                Of(DotOperandCotangent(e, x, ct.array, /*mine_first=*/false))};
}

}  // namespace kiln::autodiff
