// Shape inference of gather and scatter with full dimension numbers,
// including the batching dimensions of modern XLA.
#include <algorithm>
#include <set>

#include "core/shape_inference_internal.h"

namespace kiln::shape_inference_internal {
namespace {

// Indices with an implicit trailing index vector dimension of size 1 made
// explicit, as XLA treats index_vector_dim == rank.
StatusOr<std::vector<int64_t>> ExpandedIndexDims(const OpRequest& request, const Shape& indices,
                                                 int64_t index_vector_dim) {
  if (!indices.IsArray() || !IsIntegral(indices.element_type())) {
    return OpError(request, "indices ", indices.ToString(), " must be an integer array");
  }
  std::vector<int64_t> dims = indices.dimensions();
  if (index_vector_dim == indices.rank()) dims.push_back(1);
  if (index_vector_dim < 0 || index_vector_dim >= static_cast<int64_t>(dims.size())) {
    return OpError(request, "index_vector_dim ", index_vector_dim, " is out of range for indices ",
                   indices.ToString());
  }
  return dims;
}

bool Disjoint(std::span<const int64_t> a, std::span<const int64_t> b) {
  for (int64_t x : a) {
    if (std::find(b.begin(), b.end(), x) != b.end()) return false;
  }
  return true;
}

// Checks the index-side batching dims against the operand-side ones.
Status CheckIndexBatchingDims(const OpRequest& request, const Shape& operand,
                              std::span<const int64_t> operand_batching,
                              std::span<const int64_t> index_batching, const std::vector<int64_t>& index_dims,
                              int64_t index_vector_dim) {
  if (operand_batching.size() != index_batching.size()) {
    return OpError(request, "operand batching dims ", DimsToString(operand_batching),
                   " and indices batching dims ", DimsToString(index_batching), " must have the same length");
  }
  KILN_RETURN_IF_ERROR(CheckDimensionList(request, index_batching, static_cast<int64_t>(index_dims.size()),
                                          "indices batching dims"));
  for (size_t i = 0; i < index_batching.size(); ++i) {
    if (index_batching[i] == index_vector_dim) {
      return OpError(request, "indices batching dims ", DimsToString(index_batching),
                     " must not contain index_vector_dim ", index_vector_dim);
    }
    if (operand.dimensions(operand_batching[i]) != index_dims[static_cast<size_t>(index_batching[i])]) {
      return OpError(request, "operand ", operand.ToString(), " batching dimension ", operand_batching[i],
                     " and indices batching dimension ", index_batching[i], " differ in size");
    }
  }
  return OkStatus();
}

Status CheckIndexMap(const OpRequest& request, std::span<const int64_t> index_map, int64_t index_vector_size,
                     const Shape& operand, std::span<const int64_t> operand_batching, const char* what) {
  if (static_cast<int64_t>(index_map.size()) != index_vector_size) {
    return OpError(request, what, " ", DimsToString(index_map),
                   " must have one entry per index vector element (", index_vector_size, ")");
  }
  KILN_RETURN_IF_ERROR(CheckDimensionList(request, index_map, operand.rank(), what));
  if (!Disjoint(index_map, operand_batching)) {
    return OpError(request, what, " ", DimsToString(index_map), " must not contain operand batching dims ",
                   DimsToString(operand_batching));
  }
  return OkStatus();
}

StatusOr<Shape> InferGather(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 2));
  const Shape& operand = request.operands[0];
  const Shape& indices = request.operands[1];
  KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
  const GatherDimensionNumbers& dn = request.attrs.gather;
  const auto& slice_sizes = request.attrs.gather_slice_sizes;
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> index_dims,
                        ExpandedIndexDims(request, indices, dn.index_vector_dim));
  const auto batch_rank = static_cast<int64_t>(index_dims.size()) - 1;
  const int64_t output_rank = batch_rank + static_cast<int64_t>(dn.offset_dims.size());

  KILN_RETURN_IF_ERROR(CheckDimensionList(request, dn.offset_dims, output_rank, "offset_dims", true));
  KILN_RETURN_IF_ERROR(
      CheckDimensionList(request, dn.collapsed_slice_dims, operand.rank(), "collapsed_slice_dims", true));
  KILN_RETURN_IF_ERROR(
      CheckDimensionList(request, dn.operand_batching_dims, operand.rank(), "operand_batching_dims", true));
  if (!Disjoint(dn.collapsed_slice_dims, dn.operand_batching_dims)) {
    return OpError(request, "collapsed_slice_dims ", DimsToString(dn.collapsed_slice_dims),
                   " and operand_batching_dims ", DimsToString(dn.operand_batching_dims), " overlap");
  }
  KILN_RETURN_IF_ERROR(CheckIndexMap(request, dn.start_index_map,
                                     index_dims[static_cast<size_t>(dn.index_vector_dim)], operand,
                                     dn.operand_batching_dims, "start_index_map"));
  KILN_RETURN_IF_ERROR(CheckIndexBatchingDims(request, operand, dn.operand_batching_dims,
                                              dn.start_indices_batching_dims, index_dims,
                                              dn.index_vector_dim));
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank()) {
    return OpError(request, "slice_sizes ", DimsToString(slice_sizes), " must have ", operand.rank(),
                   " entries for operand ", operand.ToString());
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const int64_t size = slice_sizes[static_cast<size_t>(i)];
    if (size < 0 || size > operand.dimensions(i)) {
      return OpError(request, "slice size ", size, " of dimension ", i, " is out of range for operand ",
                     operand.ToString());
    }
  }
  for (int64_t d : dn.collapsed_slice_dims) {
    if (slice_sizes[static_cast<size_t>(d)] > 1) {
      return OpError(request, "collapsed dimension ", d, " has slice size ",
                     slice_sizes[static_cast<size_t>(d)], "; expected at most 1");
    }
  }
  for (int64_t d : dn.operand_batching_dims) {
    if (slice_sizes[static_cast<size_t>(d)] > 1) {
      return OpError(request, "batching dimension ", d, " has slice size ",
                     slice_sizes[static_cast<size_t>(d)], "; expected at most 1");
    }
  }
  std::vector<int64_t> offset_sizes;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (std::count(dn.collapsed_slice_dims.begin(), dn.collapsed_slice_dims.end(), i) ||
        std::count(dn.operand_batching_dims.begin(), dn.operand_batching_dims.end(), i)) {
      continue;
    }
    offset_sizes.push_back(slice_sizes[static_cast<size_t>(i)]);
  }
  if (offset_sizes.size() != dn.offset_dims.size()) {
    return OpError(request, "offset_dims ", DimsToString(dn.offset_dims), " must have ", offset_sizes.size(),
                   " entries: operand rank ", operand.rank(), " minus collapsed and batching dims");
  }
  std::vector<int64_t> dims;
  size_t offset_index = 0;
  size_t batch_index = 0;
  for (int64_t i = 0; i < output_rank; ++i) {
    if (offset_index < dn.offset_dims.size() && dn.offset_dims[offset_index] == i) {
      dims.push_back(offset_sizes[offset_index++]);
      continue;
    }
    if (static_cast<int64_t>(batch_index) == dn.index_vector_dim) ++batch_index;
    dims.push_back(index_dims[batch_index++]);
  }
  return Shape(operand.element_type(), dims);
}

StatusOr<Shape> InferScatter(const OpRequest& request) {
  const size_t count = request.operands.size();
  if (count < 3 || count % 2 == 0) {
    return OpError(request, "takes N operands, the indices and N updates; got ", count, " operands (",
                   ShapesToString(request.operands), ")");
  }
  const size_t n = (count - 1) / 2;
  const auto operands = request.operands.subspan(0, n);
  const Shape& indices = request.operands[n];
  const auto updates = request.operands.subspan(n + 1);
  const Shape& operand = operands[0];
  const Shape& update = updates[0];
  std::vector<ElementType> types;
  for (size_t i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR(ExpectArray(request, operands[i], "operand"));
    KILN_RETURN_IF_ERROR(ExpectArray(request, updates[i], "update"));
    if (operands[i].dimensions() != operand.dimensions() || updates[i].dimensions() != update.dimensions() ||
        operands[i].element_type() != updates[i].element_type()) {
      return OpError(request, "operands (", ShapesToString(operands), ") must share dimensions, updates (",
                     ShapesToString(updates), ") too, and each update must have its operand's element type");
    }
    types.push_back(operands[i].element_type());
  }
  KILN_RETURN_IF_ERROR(ExpectCalledCount(request, 1));
  KILN_RETURN_IF_ERROR(CheckReducer(request, request.called[0], types, "update"));

  const ScatterDimensionNumbers& dn = request.attrs.scatter;
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> index_dims,
                        ExpandedIndexDims(request, indices, dn.index_vector_dim));
  KILN_RETURN_IF_ERROR(
      CheckDimensionList(request, dn.update_window_dims, update.rank(), "update_window_dims", true));
  KILN_RETURN_IF_ERROR(
      CheckDimensionList(request, dn.inserted_window_dims, operand.rank(), "inserted_window_dims", true));
  KILN_RETURN_IF_ERROR(
      CheckDimensionList(request, dn.input_batching_dims, operand.rank(), "input_batching_dims", true));
  if (!Disjoint(dn.inserted_window_dims, dn.input_batching_dims)) {
    return OpError(request, "inserted_window_dims ", DimsToString(dn.inserted_window_dims),
                   " and input_batching_dims ", DimsToString(dn.input_batching_dims), " overlap");
  }
  KILN_RETURN_IF_ERROR(CheckIndexMap(request, dn.scatter_dims_to_operand_dims,
                                     index_dims[static_cast<size_t>(dn.index_vector_dim)], operand,
                                     dn.input_batching_dims, "scatter_dims_to_operand_dims"));
  KILN_RETURN_IF_ERROR(CheckIndexBatchingDims(request, operand, dn.input_batching_dims,
                                              dn.scatter_indices_batching_dims, index_dims,
                                              dn.index_vector_dim));
  const auto window_count = static_cast<int64_t>(dn.update_window_dims.size());
  if (operand.rank() !=
      window_count + static_cast<int64_t>(dn.inserted_window_dims.size() + dn.input_batching_dims.size())) {
    return OpError(request, "operand ", operand.ToString(), " rank must equal update_window_dims (",
                   window_count, ") + inserted_window_dims + input_batching_dims");
  }
  const auto scatter_rank = static_cast<int64_t>(index_dims.size()) - 1;
  if (update.rank() != window_count + scatter_rank) {
    return OpError(request, "updates ", update.ToString(), " must have rank ", window_count + scatter_rank,
                   " (update window dims + indices batch dims of ", indices.ToString(), ")");
  }
  // Window dims of the update must fit the operand's non-inserted, non-batching dims.
  size_t window_index = 0;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (std::count(dn.inserted_window_dims.begin(), dn.inserted_window_dims.end(), i) ||
        std::count(dn.input_batching_dims.begin(), dn.input_batching_dims.end(), i)) {
      continue;
    }
    const int64_t update_size = update.dimensions(dn.update_window_dims[window_index++]);
    if (update_size > operand.dimensions(i)) {
      return OpError(request, "update window of size ", update_size, " does not fit operand ",
                     operand.ToString(), " dimension ", i);
    }
  }
  size_t index_position = 0;
  for (int64_t i = 0; i < update.rank(); ++i) {
    if (std::count(dn.update_window_dims.begin(), dn.update_window_dims.end(), i)) continue;
    if (static_cast<int64_t>(index_position) == dn.index_vector_dim) ++index_position;
    if (update.dimensions(i) != index_dims[index_position]) {
      return OpError(request, "updates ", update.ToString(), " scatter dimension ", i, " must match indices ",
                     indices.ToString(), " dimension ", index_position);
    }
    ++index_position;
  }
  if (n == 1) return Shape(operand.element_type(), operand.dimensions());
  std::vector<Shape> results;
  for (const Shape& shape : operands) results.emplace_back(shape.element_type(), shape.dimensions());
  return Shape::Tuple(results);
}

}  // namespace

StatusOr<Shape> InferGatherScatter(const OpRequest& request) {
  if (request.opcode == Opcode::kGather) return InferGather(request);
  return InferScatter(request);
}

}  // namespace kiln::shape_inference_internal
