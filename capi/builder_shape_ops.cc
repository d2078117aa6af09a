// Shape manipulation ops, slicing, gather/scatter and tuples.
#include "capi/builder_internal.h"

using kiln::Op;
using kiln::capi::BuildOp;
using kiln::capi::OpContext;

namespace {

std::vector<int64_t> ToVector(OpContext& c, const int64_t* values, size_t count, const char* name) {
  std::span<const int64_t> list = c.ints(values, count, name);
  return std::vector<int64_t>(list.begin(), list.end());
}

kiln::GatherDimensionNumbers ToCore(OpContext& c, const kiln_gather_dimension_numbers_t& dn) {
  kiln::GatherDimensionNumbers result;
  result.offset_dims = ToVector(c, dn.offset_dims, dn.num_offset_dims, "offset_dims");
  result.collapsed_slice_dims =
      ToVector(c, dn.collapsed_slice_dims, dn.num_collapsed_slice_dims, "collapsed_slice_dims");
  result.start_index_map = ToVector(c, dn.start_index_map, dn.num_start_index_map, "start_index_map");
  result.index_vector_dim = dn.index_vector_dim;
  result.operand_batching_dims =
      ToVector(c, dn.operand_batching_dims, dn.num_operand_batching_dims, "operand_batching_dims");
  result.start_indices_batching_dims = ToVector(
      c, dn.start_indices_batching_dims, dn.num_start_indices_batching_dims, "start_indices_batching_dims");
  return result;
}

kiln::ScatterDimensionNumbers ToCore(OpContext& c, const kiln_scatter_dimension_numbers_t& dn) {
  kiln::ScatterDimensionNumbers result;
  result.update_window_dims =
      ToVector(c, dn.update_window_dims, dn.num_update_window_dims, "update_window_dims");
  result.inserted_window_dims =
      ToVector(c, dn.inserted_window_dims, dn.num_inserted_window_dims, "inserted_window_dims");
  result.scatter_dims_to_operand_dims =
      ToVector(c, dn.scatter_dims_to_operand_dims, dn.num_scatter_dims_to_operand_dims,
               "scatter_dims_to_operand_dims");
  result.index_vector_dim = dn.index_vector_dim;
  result.input_batching_dims =
      ToVector(c, dn.input_batching_dims, dn.num_input_batching_dims, "input_batching_dims");
  result.scatter_indices_batching_dims =
      ToVector(c, dn.scatter_indices_batching_dims, dn.num_scatter_indices_batching_dims,
               "scatter_indices_batching_dims");
  return result;
}

}  // namespace

extern "C" {

kiln_op_t kiln_op_broadcast(kiln_builder_t* builder, kiln_op_t operand, const int64_t* broadcast_sizes,
                            size_t num_broadcast_sizes) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    std::span<const int64_t> sizes = c.ints(broadcast_sizes, num_broadcast_sizes, "broadcast_sizes");
    if (!c.ok()) return Op();
    return c.builder().Broadcast(x, sizes);
  });
}

kiln_op_t kiln_op_broadcast_in_dim(kiln_builder_t* builder, kiln_op_t operand, const int64_t* out_dims,
                                   size_t out_rank, const int64_t* broadcast_dimensions,
                                   size_t num_broadcast_dimensions) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    std::span<const int64_t> out = c.ints(out_dims, out_rank, "out_dims");
    std::span<const int64_t> dims =
        c.ints(broadcast_dimensions, num_broadcast_dimensions, "broadcast_dimensions");
    if (!c.ok()) return Op();
    return c.builder().BroadcastInDim(x, out, dims);
  });
}

kiln_op_t kiln_op_reshape(kiln_builder_t* builder, kiln_op_t operand, const int64_t* new_sizes,
                          size_t new_rank) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    std::span<const int64_t> sizes = c.ints(new_sizes, new_rank, "new_sizes");
    if (!c.ok()) return Op();
    return c.builder().Reshape(x, sizes);
  });
}

kiln_op_t kiln_op_reshape_with_dimensions(kiln_builder_t* builder, kiln_op_t operand,
                                          const int64_t* dimensions, size_t num_dimensions,
                                          const int64_t* new_sizes, size_t new_rank) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    std::span<const int64_t> dims = c.ints(dimensions, num_dimensions, "dimensions");
    std::span<const int64_t> sizes = c.ints(new_sizes, new_rank, "new_sizes");
    if (!c.ok()) return Op();
    return c.builder().Reshape(x, dims, sizes);
  });
}

kiln_op_t kiln_op_collapse(kiln_builder_t* builder, kiln_op_t operand, const int64_t* dimensions,
                           size_t num_dimensions) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    std::span<const int64_t> dims = c.ints(dimensions, num_dimensions, "dimensions");
    if (!c.ok()) return Op();
    return c.builder().Collapse(x, dims);
  });
}

kiln_op_t kiln_op_transpose(kiln_builder_t* builder, kiln_op_t operand, const int64_t* permutation,
                            size_t rank) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    std::span<const int64_t> perm = c.ints(permutation, rank, "permutation");
    if (!c.ok()) return Op();
    return c.builder().Transpose(x, perm);
  });
}

kiln_op_t kiln_op_rev(kiln_builder_t* builder, kiln_op_t operand, const int64_t* dimensions,
                      size_t num_dimensions) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    std::span<const int64_t> dims = c.ints(dimensions, num_dimensions, "dimensions");
    if (!c.ok()) return Op();
    return c.builder().Rev(x, dims);
  });
}

kiln_op_t kiln_op_concat_in_dim(kiln_builder_t* builder, const kiln_op_t* operands, size_t num_operands,
                                int64_t dimension) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    std::vector<Op> xs = c.ops(operands, num_operands, "operands");
    if (!c.ok()) return Op();
    return c.builder().ConcatInDim(xs, dimension);
  });
}

kiln_op_t kiln_op_pad(kiln_builder_t* builder, kiln_op_t operand, kiln_op_t padding_value,
                      const int64_t* edge_low, const int64_t* edge_high, const int64_t* interior,
                      size_t rank) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    Op value = c.op(padding_value, "padding_value");
    std::vector<int64_t> low = c.ints_or(edge_low, rank, 0);
    std::vector<int64_t> high = c.ints_or(edge_high, rank, 0);
    std::vector<int64_t> inner = c.ints_or(interior, rank, 0);
    if (!c.ok()) return Op();
    std::vector<kiln::PaddingDimension> config(rank);
    for (size_t i = 0; i < rank; ++i) config[i] = {low[i], high[i], inner[i]};
    return c.builder().Pad(x, value, config);
  });
}

kiln_op_t kiln_op_slice(kiln_builder_t* builder, kiln_op_t operand, const int64_t* start_indices,
                        const int64_t* limit_indices, const int64_t* strides, size_t rank) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    std::span<const int64_t> starts = c.ints(start_indices, rank, "start_indices");
    std::span<const int64_t> limits = c.ints(limit_indices, rank, "limit_indices");
    std::vector<int64_t> steps = c.ints_or(strides, rank, 1);
    if (!c.ok()) return Op();
    return c.builder().Slice(x, starts, limits, steps);
  });
}

kiln_op_t kiln_op_slice_in_dim(kiln_builder_t* builder, kiln_op_t operand, int64_t start_index,
                               int64_t limit_index, int64_t stride, int64_t dimension) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    if (!c.ok()) return Op();
    return c.builder().SliceInDim(x, start_index, limit_index, stride, dimension);
  });
}

kiln_op_t kiln_op_dynamic_slice(kiln_builder_t* builder, kiln_op_t operand, kiln_op_t start_indices,
                                const int64_t* slice_sizes, size_t num_slice_sizes) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    Op starts = c.op(start_indices, "start_indices");
    std::span<const int64_t> sizes = c.ints(slice_sizes, num_slice_sizes, "slice_sizes");
    if (!c.ok()) return Op();
    return c.builder().DynamicSlice(x, starts, sizes);
  });
}

kiln_op_t kiln_op_dynamic_slice_scalars(kiln_builder_t* builder, kiln_op_t operand,
                                        const kiln_op_t* start_indices, size_t num_start_indices,
                                        const int64_t* slice_sizes, size_t num_slice_sizes) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    std::vector<Op> starts = c.ops(start_indices, num_start_indices, "start_indices");
    std::span<const int64_t> sizes = c.ints(slice_sizes, num_slice_sizes, "slice_sizes");
    if (!c.ok()) return Op();
    return c.builder().DynamicSlice(x, std::span<const Op>(starts), sizes);
  });
}

kiln_op_t kiln_op_dynamic_update_slice(kiln_builder_t* builder, kiln_op_t operand, kiln_op_t update,
                                       kiln_op_t start_indices) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    Op u = c.op(update, "update");
    Op starts = c.op(start_indices, "start_indices");
    if (!c.ok()) return Op();
    return c.builder().DynamicUpdateSlice(x, u, starts);
  });
}

kiln_op_t kiln_op_dynamic_update_slice_scalars(kiln_builder_t* builder, kiln_op_t operand, kiln_op_t update,
                                               const kiln_op_t* start_indices, size_t num_start_indices) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    Op u = c.op(update, "update");
    std::vector<Op> starts = c.ops(start_indices, num_start_indices, "start_indices");
    if (!c.ok()) return Op();
    return c.builder().DynamicUpdateSlice(x, u, std::span<const Op>(starts));
  });
}

kiln_op_t kiln_op_get_dimension_size(kiln_builder_t* builder, kiln_op_t operand, int64_t dimension) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    if (!c.ok()) return Op();
    return c.builder().GetDimensionSize(x, dimension);
  });
}

kiln_op_t kiln_op_gather(kiln_builder_t* builder, kiln_op_t operand, kiln_op_t start_indices,
                         const kiln_gather_dimension_numbers_t* dimension_numbers, const int64_t* slice_sizes,
                         size_t num_slice_sizes, int indices_are_sorted) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    Op indices = c.op(start_indices, "start_indices");
    std::span<const int64_t> sizes = c.ints(slice_sizes, num_slice_sizes, "slice_sizes");
    if (!c.ok()) return Op();
    std::optional<kiln_gather_dimension_numbers_t> whole =
        c.read_struct(dimension_numbers, "dimension_numbers");
    if (!whole) return Op();
    kiln::GatherDimensionNumbers numbers = ToCore(c, *whole);
    if (!c.ok()) return Op();
    return c.builder().Gather(x, indices, numbers, sizes, indices_are_sorted != 0);
  });
}

kiln_op_t kiln_op_scatter(kiln_builder_t* builder, const kiln_op_t* operands, size_t num_operands,
                          kiln_op_t scatter_indices, const kiln_op_t* updates, size_t num_updates,
                          const kiln_computation_t* update_computation,
                          const kiln_scatter_dimension_numbers_t* dimension_numbers, int indices_are_sorted,
                          int unique_indices) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    std::vector<Op> xs = c.ops(operands, num_operands, "operands");
    Op indices = c.op(scatter_indices, "scatter_indices");
    std::vector<Op> us = c.ops(updates, num_updates, "updates");
    const kiln::Module* computation = c.computation(update_computation, "update_computation");
    if (!c.ok()) return Op();
    std::optional<kiln_scatter_dimension_numbers_t> whole =
        c.read_struct(dimension_numbers, "dimension_numbers");
    if (!whole) return Op();
    kiln::ScatterDimensionNumbers numbers = ToCore(c, *whole);
    if (!c.ok()) return Op();
    return c.builder().Scatter(xs, indices, us, *computation, numbers, indices_are_sorted != 0,
                               unique_indices != 0);
  });
}

kiln_op_t kiln_op_tuple(kiln_builder_t* builder, const kiln_op_t* elements, size_t num_elements) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    std::vector<Op> xs = c.ops(elements, num_elements, "elements");
    if (!c.ok()) return Op();
    return c.builder().Tuple(xs);
  });
}

kiln_op_t kiln_op_get_tuple_element(kiln_builder_t* builder, kiln_op_t tuple, int64_t index) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op t = c.op(tuple, "tuple");
    if (!c.ok()) return Op();
    return c.builder().GetTupleElement(t, index);
  });
}

}  // extern "C"
