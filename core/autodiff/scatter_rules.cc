// The derivative rule of scatter with an add or an overwrite combiner (one
// operand). Scatter-add: the operand's cotangent is the result's, each
// update's the result's cotangent read back at its window. Overwrite, as
// JAX's scatter rule: an id per update is scattered alongside to learn which
// update each element ended with (repeated indices included); the operand's
// cotangent is zero where any update landed, and an update's is the result's
// cotangent read back where it was the one kept. Windows the scatter dropped
// because they did not fit get zero.
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
enum class Combiner { kAdd, kOverwrite, kOther };

Combiner KindOf(const Instruction& scatter) {
  if (scatter.called.size() != 1 || scatter.called[0]->root() == nullptr) return Combiner::kOther;
  const Instruction* root = scatter.called[0]->root();
  if (root->opcode == Opcode::kParameter && root->attrs.parameter_number == 1) return Combiner::kOverwrite;
  if (root->opcode == Opcode::kAdd && root->operand(0)->opcode == Opcode::kParameter &&
      root->operand(1)->opcode == Opcode::kParameter && root->operand(0) != root->operand(1)) {
    return Combiner::kAdd;
  }
  return Combiner::kOther;
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

}  // namespace

KILN_VJP_RULE(ScatterRule) {
  const Combiner combiner = KindOf(x);
  if (x.operands.size() != 3 || combiner == Combiner::kOther) {
    return Unimplemented(
        "kiln grad: no derivative rule yet for 'scatter' over several operands or with a "
        "combiner other than add or overwrite (instruction ",
        x.name, ")");
  }
  Instruction* updates = x.operand(2);
  KILN_ASSIGN_OR_RETURN(Instruction * fits, Fits(e, x));
  Instruction* zero_updates = e.Zeros(updates->shape);
  if (combiner == Combiner::kAdd) {
    Instruction* update_cotangent = e.Select(fits, ReadBack(e, x, ct.array), zero_updates);
    return std::vector<Cotangent>{ct, Cotangent{}, Of(update_cotangent)};
  }
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
