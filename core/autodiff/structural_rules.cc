// Derivative rules of the ops that move elements without arithmetic
// (broadcast, reshape, transpose, slice, dynamic slices, concatenate, pad,
// reverse) and of
// tuples: each operand's cotangent is the cotangent moved back.
#include <algorithm>

#include "core/autodiff/rule_helpers.h"
#include "core/autodiff/vjp_rules.h"

namespace kiln::autodiff {
namespace {}  // namespace

KILN_VJP_RULE(BroadcastRule) {
  // Sum over the dimensions the broadcast added or stretched from size 1.
  const Shape& operand = x.operand(0)->shape;
  const std::vector<int64_t>& kept = x.attrs.dimensions;
  std::vector<int64_t> summed;
  for (int64_t d = 0; d < x.shape.rank(); ++d) {
    auto found = std::find(kept.begin(), kept.end(), d);
    const bool added = found == kept.end();
    const bool stretched = !added && operand.dimensions(found - kept.begin()) != x.shape.dimensions(d);
    if (added || stretched) summed.push_back(d);
  }
  return std::vector<Cotangent>{
      Of(e.Reshape(e.ReduceSum(ct.array, std::move(summed)), operand.dimensions()))};
}

KILN_VJP_RULE(ReshapeRule) {
  return std::vector<Cotangent>{Of(e.Reshape(ct.array, x.operand(0)->shape.dimensions()))};
}

KILN_VJP_RULE(TransposeRule) {
  const std::vector<int64_t>& permutation = x.attrs.dimensions;
  std::vector<int64_t> inverse(permutation.size());
  for (size_t i = 0; i < permutation.size(); ++i)
    inverse[static_cast<size_t>(permutation[i])] = static_cast<int64_t>(i);
  return std::vector<Cotangent>{Of(e.Transpose(ct.array, std::move(inverse)))};
}

KILN_VJP_RULE(ReverseRule) {
  Attributes attrs;
  attrs.dimensions = x.attrs.dimensions;
  return std::vector<Cotangent>{Of(e.Add(Opcode::kReverse, {ct.array}, std::move(attrs)))};
}

KILN_VJP_RULE(SliceRule) {
  // The slice's elements go back where they came from; the rest get zero:
  // a pad with the stride's gaps as interior padding.
  const Shape& operand = x.operand(0)->shape;
  if (x.shape.element_count() == 0) return std::vector<Cotangent>{Of(e.Zeros(operand))};
  Attributes attrs;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    const auto i = static_cast<size_t>(d);
    const int64_t start = x.attrs.slice_starts[i];
    const int64_t stride = x.attrs.slice_strides.empty() ? 1 : x.attrs.slice_strides[i];
    const int64_t last = start + (x.shape.dimensions(d) - 1) * stride;
    attrs.padding.push_back({start, operand.dimensions(d) - last - 1, stride - 1});
  }
  Instruction* zero = e.Zeros(Shape::Scalar(ct.array->shape.element_type()));
  return std::vector<Cotangent>{Of(e.Add(Opcode::kPad, {ct.array, zero}, std::move(attrs)))};
}

KILN_VJP_RULE(ConcatenateRule) {
  const int64_t dimension = x.attrs.dimensions.at(0);
  std::vector<Cotangent> cotangents;
  int64_t offset = 0;
  for (const Instruction* operand : x.operands) {
    Attributes attrs;
    attrs.slice_starts.assign(static_cast<size_t>(x.shape.rank()), 0);
    attrs.slice_limits = x.shape.dimensions();
    attrs.slice_strides.assign(static_cast<size_t>(x.shape.rank()), 1);
    const int64_t size = operand->shape.dimensions(dimension);
    attrs.slice_starts[static_cast<size_t>(dimension)] = offset;
    attrs.slice_limits[static_cast<size_t>(dimension)] = offset + size;
    offset += size;
    cotangents.push_back(Of(e.Add(Opcode::kSlice, {ct.array}, std::move(attrs))));
  }
  return cotangents;
}

KILN_VJP_RULE(PadRule) {
  // The operand's cotangent: undo the edge padding (a pad by the negated
  // amounts, which also restores what negative padding cut off, as zeros),
  // then take every (interior + 1)-th element. The padding value appears in
  // every other element of the result, so it gets the rest of the sum.
  const Shape& operand = x.operand(0)->shape;
  Attributes unpad;
  Attributes strided;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    const PaddingDimension& padding = x.attrs.padding[static_cast<size_t>(d)];
    unpad.padding.push_back({-padding.low, -padding.high, 0});
    strided.slice_starts.push_back(0);
    strided.slice_strides.push_back(padding.interior + 1);
  }
  Instruction* zero = e.Zeros(Shape::Scalar(ct.array->shape.element_type()));
  Instruction* unpadded = e.Add(Opcode::kPad, {ct.array, zero}, std::move(unpad));
  strided.slice_limits = unpadded->shape.dimensions();
  Instruction* operand_cotangent = e.Add(Opcode::kSlice, {unpadded}, std::move(strided));
  std::vector<int64_t> all;
  for (int64_t d = 0; d < x.shape.rank(); ++d) all.push_back(d);
  std::vector<int64_t> all_operand;
  for (int64_t d = 0; d < operand.rank(); ++d) all_operand.push_back(d);
  Instruction* value_cotangent = e.Binary(Opcode::kSubtract, e.ReduceSum(ct.array, std::move(all)),
                                          e.ReduceSum(operand_cotangent, std::move(all_operand)));
  return std::vector<Cotangent>{Of(operand_cotangent), Of(value_cotangent)};
}

KILN_VJP_RULE(DynamicSliceRule) {
  // The slice's cotangent goes back where the slice was read: start indices
  // are clamped the same way by dynamic-update-slice as by dynamic-slice.
  Instruction* operand = x.operand(0);
  std::vector<Instruction*> operands = {e.Zeros(operand->shape), ct.array};
  operands.insert(operands.end(), x.operands.begin() + 1, x.operands.end());
  std::vector<Cotangent> cotangents(x.operands.size());
  cotangents[0] = Of(e.Add(Opcode::kDynamicUpdateSlice, std::move(operands)));
  return cotangents;
}

KILN_VJP_RULE(DynamicUpdateSliceRule) {
  // The operand gets the cotangent outside the updated window, the update
  // the cotangent inside it.
  Instruction* update = x.operand(1);
  std::vector<Instruction*> outside = {ct.array, e.Zeros(update->shape)};
  outside.insert(outside.end(), x.operands.begin() + 2, x.operands.end());
  std::vector<Instruction*> inside = {ct.array};
  inside.insert(inside.end(), x.operands.begin() + 2, x.operands.end());
  Attributes attrs;
  attrs.dynamic_slice_sizes = update->shape.dimensions();
  std::vector<Cotangent> cotangents(x.operands.size());
  cotangents[0] = Of(e.Add(Opcode::kDynamicUpdateSlice, std::move(outside)));
  cotangents[1] = Of(e.Add(Opcode::kDynamicSlice, std::move(inside), std::move(attrs)));
  return cotangents;
}

KILN_VJP_RULE(GatherRule) {
  // The transpose of a gather is a scatter-add of the cotangent into zeros
  // with the same dimension numbers. A gather clamps its start indices so
  // that each slice fits, where a scatter would drop the window instead:
  // the indices are clamped the same way first.
  Instruction* operand = x.operand(0);
  Instruction* indices = x.operand(1);
  const GatherDimensionNumbers& gather = x.attrs.gather;
  const Shape& index_shape = indices->shape;
  const bool implicit_index_vector = gather.index_vector_dim == index_shape.rank();
  std::vector<int64_t> upper;
  for (size_t k = 0; k < gather.start_index_map.size(); ++k) {
    const int64_t dimension = gather.start_index_map[k];
    upper.push_back(operand->shape.dimensions(dimension) -
                    x.attrs.gather_slice_sizes[static_cast<size_t>(dimension)]);
  }
  StatusOr<Literal> bounds = Literal::FromVector<int64_t>(upper).Convert(index_shape.element_type());
  if (!bounds.ok()) return Internal("kiln grad: gather indices of type ", index_shape.ToString());
  if (implicit_index_vector) {
    StatusOr<Literal> scalar = bounds->Reshape({});
    if (!scalar.ok()) return scalar.status();
    bounds = std::move(scalar).value();
  }
  Instruction* bound = e.Constant(std::move(bounds).value());
  std::vector<int64_t> bound_dimensions;
  if (!implicit_index_vector) bound_dimensions.push_back(gather.index_vector_dim);
  Instruction* high = e.BroadcastInDim(bound, index_shape, std::move(bound_dimensions));
  Instruction* low = e.Zeros(index_shape);
  Instruction* clamped = e.Add(Opcode::kClamp, {low, indices, high});

  Attributes attrs;
  attrs.scatter->update_window_dims = gather.offset_dims;
  attrs.scatter->inserted_window_dims = gather.collapsed_slice_dims;
  attrs.scatter->scatter_dims_to_operand_dims = gather.start_index_map;
  attrs.scatter->index_vector_dim = gather.index_vector_dim;
  attrs.scatter->input_batching_dims = gather.operand_batching_dims;
  attrs.scatter->scatter_indices_batching_dims = gather.start_indices_batching_dims;
  attrs.indices_are_sorted = x.attrs.indices_are_sorted;
  Instruction* scattered = e.Add(Opcode::kScatter, {e.Zeros(operand->shape), clamped, ct.array},
                                 std::move(attrs), nullptr, {e.Adder(operand->shape.element_type())});
  return std::vector<Cotangent>{Of(scattered), Cotangent{}};
}

KILN_VJP_RULE(GetTupleElementRule) {
  const Shape& tuple = x.operand(0)->shape;
  Cotangent cotangent;
  cotangent.elements.resize(tuple.tuple_shapes().size());
  cotangent.elements[static_cast<size_t>(x.attrs.tuple_index)] = ct;
  return std::vector<Cotangent>{std::move(cotangent)};
}

KILN_VJP_RULE(TupleRule) {
  std::vector<Cotangent> cotangents(x.operands.size());
  if (!ct.elements.empty()) cotangents = ct.elements;
  return cotangents;
}

}  // namespace kiln::autodiff
