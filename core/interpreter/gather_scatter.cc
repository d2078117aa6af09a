// gather and scatter with XLA's dimension numbers, including batching
// dimensions. Gather clamps start indices so the slice fits; scatter skips
// an update window that would not fit in the operand.
#include <algorithm>
#include <cstring>

#include "core/interpreter/array_util.h"
#include "core/interpreter/called_computation.h"
#include "core/interpreter/kernels.h"

namespace kiln::interpreter {
namespace {

bool Contains(const std::vector<int64_t>& values, int64_t value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// Reads the start-index vector for batch position `batch_index` (the index
// dimensions of `indices` other than `index_vector_dim`).
class IndexReader {
 public:
  IndexReader(const Literal& indices, int64_t index_vector_dim)
      : indices_(indices),
        vector_dim_(index_vector_dim),
        strides_(RowMajorStrides(indices.shape().dimensions())) {}

  // Component `k` of the index vector at `batch_index`.
  int64_t Component(std::span<const int64_t> batch_index, int64_t k) const {
    int64_t linear = 0;
    const int64_t rank = indices_.shape().rank();
    for (int64_t d = 0, b = 0; d < rank; ++d) {
      const int64_t value = d == vector_dim_ ? k : batch_index[static_cast<size_t>(b++)];
      linear += value * strides_[static_cast<size_t>(d)];
    }
    return IndexValue(indices_, linear);
  }
  // Position in the batch index of indices dimension `dim`.
  int64_t BatchPosition(int64_t dim) const { return dim > vector_dim_ ? dim - 1 : dim; }

 private:
  const Literal& indices_;
  int64_t vector_dim_;
  std::vector<int64_t> strides_;
};

}  // namespace

StatusOr<Literal> EvaluateGather(const Instruction& instruction, Operands operands) {
  const Literal& operand = *operands[0];
  const Literal& indices = *operands[1];
  const GatherDimensionNumbers& dn = instruction.attrs.gather;
  const std::vector<int64_t>& slice_sizes = instruction.attrs.gather_slice_sizes;
  const Shape& out_shape = instruction.shape;
  const std::vector<int64_t>& operand_dims = operand.shape().dimensions();
  const size_t operand_rank = operand_dims.size();
  if (slice_sizes.size() != operand_rank || dn.index_vector_dim < 0 ||
      dn.index_vector_dim > indices.shape().rank()) {
    return InvalidArgument("gather slice sizes or index_vector_dim do not match the operand");
  }
  // Operand dimensions that the offset dims of the output walk, in order.
  std::vector<int64_t> window_operand_dims;
  for (int64_t d = 0; d < static_cast<int64_t>(operand_rank); ++d) {
    if (!Contains(dn.collapsed_slice_dims, d) && !Contains(dn.operand_batching_dims, d)) {
      window_operand_dims.push_back(d);
    }
  }
  if (window_operand_dims.size() != dn.offset_dims.size()) {
    return InvalidArgument("gather offset_dims do not match the uncollapsed slice dimensions");
  }
  for (size_t d = 0; d < operand_rank; ++d) {
    if (slice_sizes[d] < 0 || slice_sizes[d] > operand_dims[d]) {
      return InvalidArgument("gather slice size ", slice_sizes[d], " exceeds operand dimension ", d);
    }
  }
  IndexReader reader(indices, dn.index_vector_dim);
  const int bytes = ByteWidth(out_shape.element_type());
  const std::vector<int64_t> operand_strides = RowMajorStrides(operand_dims);
  Literal result(out_shape);
  if (result.element_count() == 0) return result;
  std::vector<int64_t> out_index(static_cast<size_t>(out_shape.rank()), 0), batch_index,
      operand_index(operand_rank);
  int64_t out_linear = 0;
  do {
    batch_index.clear();
    for (int64_t d = 0; d < out_shape.rank(); ++d) {
      if (!Contains(dn.offset_dims, d)) batch_index.push_back(out_index[static_cast<size_t>(d)]);
    }
    std::fill(operand_index.begin(), operand_index.end(), 0);
    for (size_t k = 0; k < dn.start_index_map.size(); ++k) {
      const int64_t d = dn.start_index_map[k];
      if (d < 0 || d >= static_cast<int64_t>(operand_rank)) return InvalidArgument("bad start_index_map");
      operand_index[static_cast<size_t>(d)] = reader.Component(batch_index, static_cast<int64_t>(k));
    }
    for (size_t i = 0; i < dn.operand_batching_dims.size() && i < dn.start_indices_batching_dims.size();
         ++i) {
      const int64_t position = reader.BatchPosition(dn.start_indices_batching_dims[i]);
      operand_index[static_cast<size_t>(dn.operand_batching_dims[i])] =
          batch_index[static_cast<size_t>(position)];
    }
    int64_t source = 0;
    for (size_t d = 0; d < operand_rank; ++d) {
      operand_index[d] = std::clamp<int64_t>(operand_index[d], 0, operand_dims[d] - slice_sizes[d]);
    }
    for (size_t w = 0; w < window_operand_dims.size(); ++w) {
      operand_index[static_cast<size_t>(window_operand_dims[w])] +=
          out_index[static_cast<size_t>(dn.offset_dims[w])];
    }
    for (size_t d = 0; d < operand_rank; ++d) source += operand_index[d] * operand_strides[d];
    std::memcpy(result.raw().data() + out_linear * bytes, operand.raw().data() + source * bytes,
                static_cast<size_t>(bytes));
    ++out_linear;
  } while (NextIndex(out_shape.dimensions(), out_index));
  return result;
}

StatusOr<Literal> EvaluateScatter(const Instruction& instruction, Operands operands, EvalContext& context) {
  const size_t count = (operands.size() - 1) / 2;
  if (count == 0 || operands.size() != 2 * count + 1 || instruction.called.size() != 1) {
    return Internal("scatter needs N operands, indices, N updates and a computation");
  }
  const Literal& indices = *operands[count];
  const ScatterDimensionNumbers& dn = instruction.attrs.scatter;
  const std::vector<int64_t>& operand_dims = operands[0]->shape().dimensions();
  const size_t operand_rank = operand_dims.size();
  const std::vector<int64_t>& update_dims = operands[count + 1]->shape().dimensions();
  if (dn.index_vector_dim < 0 || dn.index_vector_dim > indices.shape().rank()) {
    return InvalidArgument("scatter index_vector_dim out of range");
  }
  std::vector<int64_t> window_operand_dims;
  for (int64_t d = 0; d < static_cast<int64_t>(operand_rank); ++d) {
    if (!Contains(dn.inserted_window_dims, d) && !Contains(dn.input_batching_dims, d))
      window_operand_dims.push_back(d);
  }
  if (window_operand_dims.size() != dn.update_window_dims.size()) {
    return InvalidArgument("scatter update_window_dims do not match the operand");
  }
  std::vector<int64_t> window_size(operand_rank, 1);
  for (size_t w = 0; w < window_operand_dims.size(); ++w) {
    window_size[static_cast<size_t>(window_operand_dims[w])] =
        update_dims[static_cast<size_t>(dn.update_window_dims[w])];
  }
  std::vector<ElementType> types;
  std::vector<Literal> results;
  for (size_t i = 0; i < count; ++i) {
    types.push_back(operands[i]->shape().element_type());
    results.push_back(*operands[i]);
  }
  const Computation& combiner = *instruction.called[0];
  std::optional<Opcode> simple = count == 1 ? SimpleBinaryComputation(combiner) : std::nullopt;
  if (simple && combiner.root()->shape.element_type() != types[0]) simple.reset();
  std::vector<ElementType> argument_types = types;
  argument_types.insert(argument_types.end(), types.begin(), types.end());
  ScalarCall call(*context.runner, combiner, argument_types);

  IndexReader reader(indices, dn.index_vector_dim);
  const std::vector<int64_t> operand_strides = RowMajorStrides(operand_dims);
  if (operands[count + 1]->element_count() == 0)
    return count == 1 ? std::move(results[0]) : Literal::Tuple(std::move(results));
  std::vector<int64_t> update_index(update_dims.size(), 0), batch_index, start(operand_rank);
  int64_t update_linear = 0;
  do {
    batch_index.clear();
    for (int64_t d = 0; d < static_cast<int64_t>(update_dims.size()); ++d) {
      if (!Contains(dn.update_window_dims, d)) batch_index.push_back(update_index[static_cast<size_t>(d)]);
    }
    std::fill(start.begin(), start.end(), 0);
    for (size_t k = 0; k < dn.scatter_dims_to_operand_dims.size(); ++k) {
      const int64_t d = dn.scatter_dims_to_operand_dims[k];
      if (d < 0 || d >= static_cast<int64_t>(operand_rank))
        return InvalidArgument("bad scatter_dims_to_operand_dims");
      start[static_cast<size_t>(d)] = reader.Component(batch_index, static_cast<int64_t>(k));
    }
    for (size_t i = 0; i < dn.input_batching_dims.size() && i < dn.scatter_indices_batching_dims.size();
         ++i) {
      const int64_t position = reader.BatchPosition(dn.scatter_indices_batching_dims[i]);
      start[static_cast<size_t>(dn.input_batching_dims[i])] = batch_index[static_cast<size_t>(position)];
    }
    bool fits = true;
    int64_t target = 0;
    for (size_t d = 0; d < operand_rank; ++d) {
      if (start[d] < 0 || start[d] > operand_dims[d] - window_size[d]) fits = false;
    }
    if (fits) {
      for (size_t d = 0; d < operand_rank; ++d) target += start[d] * operand_strides[d];
      for (size_t w = 0; w < window_operand_dims.size(); ++w) {
        const auto d = static_cast<size_t>(window_operand_dims[w]);
        target += update_index[static_cast<size_t>(dn.update_window_dims[w])] * operand_strides[d];
      }
      if (simple) {
        Status status = DispatchElementType(types[0], [&](auto tag) -> Status {
          using T = decltype(tag);
          T& slot = results[0].data<T>()[static_cast<size_t>(target)];
          const T update = operands[count + 1]->data<T>()[static_cast<size_t>(update_linear)];
          return WithBinaryOp<T>(*simple, [&](auto op) { slot = op(slot, update); });
        });
        KILN_RETURN_IF_ERROR(status);
      } else {
        for (size_t i = 0; i < count; ++i) {
          call.Set(i, results[i], target);
          call.Set(count + i, *operands[count + 1 + i], update_linear);
        }
        KILN_ASSIGN_OR_RETURN(Literal combined, call.Call());
        for (size_t i = 0; i < count; ++i) {
          const Literal& leaf = ScalarCall::Leaf(combined, i);
          if (leaf.element_count() != 1 || leaf.shape().element_type() != types[i]) {
            return InvalidArgument("scatter computation returned ", combined.shape().ToString());
          }
          CopyElement(leaf, 0, results[i], target);
        }
      }
    }
    ++update_linear;
  } while (NextIndex(update_dims, update_index));
  if (count == 1) return std::move(results[0]);
  return Literal::Tuple(std::move(results));
}

}  // namespace kiln::interpreter
