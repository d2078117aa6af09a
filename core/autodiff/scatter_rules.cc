// The derivative rule of scatter (one operand) with an add, overwrite,
// multiply, maximum or minimum combiner, as JAX differentiates scatter,
// scatter_mul, scatter_max and scatter_min. Scatter-add: the operand's cotangent is the result's, each
// update's the result's cotangent read back at its window. Overwrite, as
// JAX's scatter rule: an id per update is scattered alongside to learn which
// update each element ended with (repeated indices included); the operand's
// cotangent is zero where any update landed, and an update's is the result's
// cotangent read back where it was the one kept. Windows the scatter dropped
// because they did not fit get zero. Multiply: the operand's cotangent is
// the result's times the product of the updates that landed on it, an
// update's the result's times the operand and the other updates there (JAX
// has this rule only for unique indices; Kiln's is exact for repeated ones). Maximum/minimum: the updates
// equal to the result and the operand element when it equals the result share the cotangent equally (JAX's
// rule for contending values).
#include <algorithm>

#include "core/autodiff/rule_helpers.h"
#include "core/autodiff/vjp_rules.h"

namespace kiln::autodiff {
namespace {

bool Contains(const std::vector<int64_t>& list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// The combiner's root when it is an elementwise op of its two parameters or
// one of the parameters.
enum class Combiner { kAdd, kOverwrite, kMultiply, kExtremal, kOther };

Combiner KindOf(const Instruction& scatter) {
  if (scatter.called.size() != 1 || scatter.called[0]->root() == nullptr) return Combiner::kOther;
  const Instruction* root = scatter.called[0]->root();
  if (root->opcode == Opcode::kParameter && root->attrs.parameter_number == 1) return Combiner::kOverwrite;
  if (root->operands.size() != 2 || root->operand(0)->opcode != Opcode::kParameter ||
      root->operand(1)->opcode != Opcode::kParameter || root->operand(0) == root->operand(1)) {
    return Combiner::kOther;
  }
  switch (root->opcode) {
    case Opcode::kAdd: return Combiner::kAdd;
    case Opcode::kMultiply: return Combiner::kMultiply;
    case Opcode::kMaximum:
    case Opcode::kMinimum: return Combiner::kExtremal;
    default: return Combiner::kOther;
  }
}

// The window each update covers in the operand.
std::vector<int64_t> Windows(const Instruction& x) {
  const Shape& operand = x.operand(0)->shape;
  const Shape& updates = x.operand(2)->shape;
  const ScatterDimensionNumbers& scatter = x.attrs.scatter;
  std::vector<int64_t> window(static_cast<size_t>(operand.rank()), 1);
  size_t next_window = 0;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (Contains(scatter.inserted_window_dims, d) || Contains(scatter.input_batching_dims, d)) continue;
    window[static_cast<size_t>(d)] = updates.dimensions(scatter.update_window_dims[next_window++]);
  }
  return window;
}

// `source` (of the operand's dimensions) read back at each update's window:
// a gather with the scatter's dimension numbers.
Instruction* ReadBack(VjpEmitter& e, const Instruction& x, Instruction* source) {
  const ScatterDimensionNumbers& scatter = x.attrs.scatter;
  Attributes attrs;
  attrs.gather.offset_dims = scatter.update_window_dims;
  attrs.gather.collapsed_slice_dims = scatter.inserted_window_dims;
  attrs.gather.start_index_map = scatter.scatter_dims_to_operand_dims;
  attrs.gather.index_vector_dim = scatter.index_vector_dim;
  attrs.gather.operand_batching_dims = scatter.input_batching_dims;
  attrs.gather.start_indices_batching_dims = scatter.scatter_indices_batching_dims;
  attrs.gather_slice_sizes = Windows(x);
  attrs.indices_are_sorted = x.attrs.indices_are_sorted;
  return e.Add(Opcode::kGather, {source, x.operand(1)}, std::move(attrs));
}

// Per update element: whether its window fits (0 <= start <= size - window
// in every indexed dimension), so that the scatter did not drop it.
StatusOr<Instruction*> Fits(VjpEmitter& e, const Instruction& x) {
  const Instruction* operand = x.operand(0);
  Instruction* indices = x.operand(1);
  const Shape& updates = x.operand(2)->shape;
  const ScatterDimensionNumbers& scatter = x.attrs.scatter;
  const std::vector<int64_t> window = Windows(x);
  const Shape& index_shape = indices->shape;
  const bool implicit_index_vector = scatter.index_vector_dim == index_shape.rank();
  std::vector<int64_t> upper;
  for (int64_t dimension : scatter.scatter_dims_to_operand_dims) {
    upper.push_back(operand->shape.dimensions(dimension) - window[static_cast<size_t>(dimension)]);
  }
  StatusOr<Literal> bounds = Literal::FromVector<int64_t>(upper).Convert(index_shape.element_type());
  if (!bounds.ok()) return Internal("kiln grad: scatter indices of type ", index_shape.ToString());
  if (implicit_index_vector) {
    StatusOr<Literal> scalar = bounds->Reshape({});
    if (!scalar.ok()) return scalar.status();
    bounds = std::move(scalar).value();
  }
  std::vector<int64_t> bound_dimensions;
  if (!implicit_index_vector) bound_dimensions.push_back(scatter.index_vector_dim);
  Instruction* high = e.BroadcastInDim(e.Constant(std::move(bounds).value()), index_shape, bound_dimensions);
  Instruction* outside =
      e.Binary(Opcode::kOr, e.Compare(indices, e.Zeros(index_shape), ComparisonDirection::kLt),
               e.Compare(indices, high, ComparisonDirection::kGt));
  const ElementType type = updates.element_type();
  Instruction* outside_count = e.Convert(outside, type);
  if (!implicit_index_vector) outside_count = e.ReduceSum(outside_count, {scatter.index_vector_dim});
  Instruction* fits = e.Compare(outside_count, e.Zeros(outside_count->shape), ComparisonDirection::kEq);
  std::vector<int64_t> scatter_dims;
  for (int64_t d = 0; d < updates.rank(); ++d) {
    if (!Contains(scatter.update_window_dims, d)) scatter_dims.push_back(d);
  }
  return e.BroadcastInDim(fits, Shape(ElementType::kPred, updates.dimensions()), scatter_dims);
}

// One s32 id (from 1) per update window, repeated over the window's elements.
Instruction* UpdateIds(VjpEmitter& e, const Instruction& x) {
  const Shape& updates = x.operand(2)->shape;
  std::vector<int64_t> scatter_dims;
  std::vector<int64_t> per_window;
  int64_t count = 1;
  for (int64_t d = 0; d < updates.rank(); ++d) {
    if (Contains(x.attrs.scatter.update_window_dims, d)) continue;
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

// `values` (of the updates' shape) added up at the scatter's windows into
// zeros of the operand's dimensions (windows that do not fit are dropped).
Instruction* ScatterAdd(VjpEmitter& e, const Instruction& x, Instruction* values) {
  const ElementType type = values->shape.element_type();
  Attributes attrs = x.attrs;
  return e.Add(Opcode::kScatter,
               {e.Zeros(Shape(type, x.operand(0)->shape.dimensions())), x.operand(1), values},
               std::move(attrs), nullptr, {e.Adder(type)});
}

// A scatter of `updates` into `operand` with `x`'s indices and combiner.
Instruction* ScatterLike(VjpEmitter& e, const Instruction& x, Instruction* operand, Instruction* updates) {
  Attributes attrs = x.attrs;
  return e.Add(Opcode::kScatter, {operand, x.operand(1), updates}, std::move(attrs), nullptr, x.called);
}

std::vector<Cotangent> MultiplyScatter(VjpEmitter& e, const Instruction& x, const Cotangent& ct,
                                       Instruction* fits) {
  // y = operand * P, P the product of the updates landing on an element. An
  // update's cotangent is the result's times the operand times the product
  // of the other updates at its element: P / update when it is not zero,
  // else the product of the nonzero ones when it is the only zero there (0
  // when there are more), so repeated indices and zeros are exact.
  Instruction* operand = x.operand(0);
  Instruction* updates = x.operand(2);
  Instruction* ones = e.Full(1.0, operand->shape);
  const Cotangent operand_cotangent =
      Of(e.Binary(Opcode::kMultiply, ct.array, ScatterLike(e, x, ones, updates)));
  Instruction* zero = e.Zeros(updates->shape);
  Instruction* one = e.Full(1.0, updates->shape);
  Instruction* is_zero = e.Compare(updates, zero, ComparisonDirection::kEq);
  Instruction* nonzero_product = ReadBack(e, x, ScatterLike(e, x, ones, e.Select(is_zero, one, updates)));
  Instruction* zeros_there = ReadBack(e, x, ScatterAdd(e, x, e.Select(is_zero, one, zero)));
  auto when_zeros_there = [&](double count, Instruction* value) {
    return e.Select(e.Compare(zeros_there, e.Full(count, zeros_there->shape), ComparisonDirection::kEq),
                    value, zero);
  };
  Instruction* others = e.Select(
      is_zero, when_zeros_there(1.0, nonzero_product),
      when_zeros_there(0.0, e.Binary(Opcode::kDivide, nonzero_product, e.Select(is_zero, one, updates))));
  Instruction* g = ReadBack(e, x, e.Binary(Opcode::kMultiply, ct.array, operand));
  return {operand_cotangent, Cotangent{}, Of(e.Select(fits, e.Binary(Opcode::kMultiply, g, others), zero))};
}

std::vector<Cotangent> ExtremalScatter(VjpEmitter& e, Instruction& x, const Cotangent& ct,
                                       Instruction* fits) {
  // JAX's scatter_max/scatter_min rule: of the n updates equal to the result
  // at an element, each gets 1/n of its cotangent, or 1/(n+1) when the
  // operand element equals the result too, which then keeps 1/(n+1).
  Instruction* updates = x.operand(2);
  Instruction* zero = e.Zeros(updates->shape);
  Instruction* one = e.Full(1.0, updates->shape);
  Instruction* target = ReadBack(e, x, &x);
  Instruction* successful =
      e.Binary(Opcode::kAnd, fits, e.Compare(updates, target, ComparisonDirection::kEq));
  Instruction* retained = e.Compare(ReadBack(e, x, x.operand(0)), target, ComparisonDirection::kEq);
  Instruction* winners = ReadBack(e, x, ScatterAdd(e, x, e.Select(successful, one, zero)));
  Instruction* references = ReadBack(e, x, ScatterAdd(e, x, one));
  Instruction* shared_with_operand = e.Binary(Opcode::kDivide, one, e.Binary(Opcode::kAdd, winners, one));
  Instruction* update_share = e.Select(
      successful, e.Select(retained, shared_with_operand, e.Binary(Opcode::kDivide, one, winners)), zero);
  // Each of the `references` updates at an element takes back its part of
  // what the operand element does not keep.
  Instruction* operand_share = e.Select(retained, shared_with_operand, zero);
  Instruction* operand_coefficient =
      e.Binary(Opcode::kDivide, e.Binary(Opcode::kSubtract, operand_share, one), references);
  Instruction* g = ReadBack(e, x, ct.array);
  Instruction* taken_back = e.Select(fits, e.Binary(Opcode::kMultiply, operand_coefficient, g), zero);
  return {Of(e.Binary(Opcode::kAdd, ct.array, ScatterAdd(e, x, taken_back))), Cotangent{},
          Of(e.Binary(Opcode::kMultiply, update_share, g))};
}

}  // namespace

KILN_VJP_RULE(ScatterRule) {
  if (x.operands.size() > 3) return VariadicScatterCotangents(e, x, ct);
  const Combiner combiner = KindOf(x);
  if (x.operands.size() != 3 || combiner == Combiner::kOther) {
    return Unimplemented(
        "kiln grad: no derivative rule yet for 'scatter' over several operands or with a "
        "combiner other than add, overwrite, multiply, maximum or minimum (instruction ",
        x.name, ")");
  }
  Instruction* updates = x.operand(2);
  KILN_ASSIGN_OR_RETURN(Instruction * fits, Fits(e, x));
  Instruction* zero_updates = e.Zeros(updates->shape);
  if (combiner == Combiner::kAdd) {
    Instruction* update_cotangent = e.Select(fits, ReadBack(e, x, ct.array), zero_updates);
    return std::vector<Cotangent>{ct, Cotangent{}, Of(update_cotangent)};
  }
  if (combiner == Combiner::kMultiply) return MultiplyScatter(e, x, ct, fits);
  if (combiner == Combiner::kExtremal) return ExtremalScatter(e, x, ct, fits);
  // Overwrite: which update each operand element ended with (0: none).
  const Shape ids_shape(ElementType::kS32, x.operand(0)->shape.dimensions());
  const Shape s32 = Shape::Scalar(ElementType::kS32);
  auto keep_update = std::make_unique<Computation>("vjp_overwrite_s32");
  Attributes second;
  second.parameter_number = 1;
  keep_update->AddInstruction(MakeInstruction(Opcode::kParameter, s32, {}))->name = "old";
  Instruction* update = keep_update->AddInstruction(MakeInstruction(Opcode::kParameter, s32, {}, second));
  update->name = "new";
  keep_update->set_root(update);
  Computation* overwrite = e.module().AddComputation(std::move(keep_update));
  Instruction* ids = UpdateIds(e, x);
  Attributes attrs = x.attrs;
  Instruction* landed = e.Add(Opcode::kScatter, {e.Zeros(ids_shape), x.operand(1), ids}, std::move(attrs),
                              nullptr, {overwrite});
  Instruction* untouched = e.Compare(landed, e.Zeros(ids_shape), ComparisonDirection::kEq);
  Instruction* operand_cotangent = e.Select(untouched, ct.array, e.Zeros(ct.array->shape));
  Instruction* kept =
      e.Binary(Opcode::kAnd, fits, e.Compare(ReadBack(e, x, landed), ids, ComparisonDirection::kEq));
  Instruction* update_cotangent = e.Select(kept, ReadBack(e, x, ct.array), zero_updates);
  return std::vector<Cotangent>{Of(operand_cotangent), Cotangent{}, Of(update_cotangent)};
}

}  // namespace kiln::autodiff
