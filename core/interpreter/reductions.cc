// Reductions and windowed ops: reduce, reduce-window, select-and-scatter and
// map. Each has a typed fast path for reducers of the form `p0 OP p1` and a
// general path that calls the computation per element.
#include <cstring>

#include "core/interpreter/array_util.h"
#include "core/interpreter/called_computation.h"
#include "core/interpreter/kernels.h"

namespace kiln::interpreter {
namespace {

std::vector<Shape> ResultLeaves(const Shape& shape) {
  return shape.IsTuple() ? shape.tuple_shapes() : std::vector<Shape>{shape};
}

Literal PackResults(std::vector<Literal> results) {
  if (results.size() == 1) return std::move(results[0]);
  return Literal::Tuple(std::move(results));
}

// Checks that a per-element call returned `count` scalars of `types`.
Status CheckScalarResult(const Literal& result, const std::vector<ElementType>& types, const char* op) {
  const size_t count = types.size();
  const bool tuple = result.shape().IsTuple();
  if ((count == 1 && tuple && result.tuple_elements().size() != 1) ||
      (count > 1 && (!tuple || result.tuple_elements().size() != count))) {
    return InvalidArgument(op, " computation returned ", result.shape().ToString(), ", expected ", count,
                           " scalars");
  }
  for (size_t i = 0; i < count; ++i) {
    const Literal& leaf = ScalarCall::Leaf(result, i);
    if (leaf.element_count() != 1 || leaf.shape().element_type() != types[i]) {
      return InvalidArgument(op, " computation returned ", result.shape().ToString(),
                             ", expected scalars of type ", ElementTypeName(types[i]));
    }
  }
  return OkStatus();
}

// Input element position of one window element, or false when it falls in
// padding or between dilated base elements.
bool WindowSource(const Window& window, std::span<const int64_t> out_index,
                  std::span<const int64_t> window_index, std::span<const int64_t> in_dims,
                  std::span<int64_t> in_index) {
  for (size_t d = 0; d < in_dims.size(); ++d) {
    const WindowDimension& w = window.dimensions[d];
    const int64_t position = out_index[d] * w.stride + window_index[d] * w.window_dilation - w.padding_low;
    if (position < 0 || position % w.base_dilation != 0) return false;
    const int64_t i = position / w.base_dilation;
    if (i >= in_dims[d]) return false;
    in_index[d] = i;
  }
  return true;
}

int64_t Linear(std::span<const int64_t> index, std::span<const int64_t> strides) {
  int64_t linear = 0;
  for (size_t d = 0; d < index.size(); ++d) linear += index[d] * strides[d];
  return linear;
}

Literal Filled(const Shape& shape, const Literal& value) {
  Literal result(shape);
  const int bytes = ByteWidth(shape.element_type());
  for (int64_t i = 0; i < result.element_count(); ++i) {
    std::memcpy(result.raw().data() + i * bytes, value.raw().data(), static_cast<size_t>(bytes));
  }
  return result;
}

Status CheckWindow(const Window& window, int64_t rank, const char* op) {
  if (static_cast<int64_t>(window.dimensions.size()) != rank) {
    return InvalidArgument(op, " window has ", window.dimensions.size(), " dimensions for rank ", rank);
  }
  for (const WindowDimension& w : window.dimensions) {
    if (w.size < 0 || w.stride < 1 || w.window_dilation < 1 || w.base_dilation < 1) {
      return InvalidArgument(op, " window needs positive strides and dilations");
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<Literal> EvaluateReduce(const Instruction& instruction, Operands operands, EvalContext& context) {
  const size_t count = operands.size() / 2;
  if (count == 0 || operands.size() != 2 * count || instruction.called.size() != 1) {
    return Internal("reduce needs N arrays, N initial values and a computation");
  }
  const Shape& in_shape = operands[0]->shape();
  const std::vector<int64_t>& in_dims = in_shape.dimensions();
  // Output offset contributed by each input dimension (0 for reduced ones).
  std::vector<bool> reduced(in_dims.size(), false);
  for (int64_t d : instruction.attrs.dimensions) {
    if (d < 0 || d >= in_shape.rank()) return InvalidArgument("reduce dimension ", d, " out of range");
    reduced[static_cast<size_t>(d)] = true;
  }
  std::vector<int64_t> out_dims;
  for (size_t d = 0; d < in_dims.size(); ++d) {
    if (!reduced[d]) out_dims.push_back(in_dims[d]);
  }
  const std::vector<int64_t> out_strides_compact = RowMajorStrides(out_dims);
  std::vector<int64_t> out_strides(in_dims.size(), 0);
  for (size_t d = 0, k = 0; d < in_dims.size(); ++d) {
    if (!reduced[d]) out_strides[d] = out_strides_compact[k++];
  }
  std::vector<ElementType> types;
  std::vector<Literal> accumulators;
  for (size_t i = 0; i < count; ++i) {
    if (operands[i]->shape().dimensions() != in_dims || operands[count + i]->element_count() != 1) {
      return InvalidArgument("reduce operands must share dimensions and have scalar initial values");
    }
    types.push_back(operands[i]->shape().element_type());
    accumulators.push_back(Filled(Shape(types.back(), out_dims), *operands[count + i]));
  }
  if (in_shape.element_count() == 0) return PackResults(std::move(accumulators));

  const Computation& reducer = *instruction.called[0];
  std::vector<int64_t> index(in_dims.size(), 0);
  if (count == 1) {
    if (auto opcode = SimpleBinaryComputation(reducer);
        opcode && reducer.root()->shape.element_type() == types[0]) {
      Status status = DispatchElementType(types[0], [&](auto tag) -> Status {
        using T = decltype(tag);
        auto in = operands[0]->data<T>();
        auto acc = accumulators[0].data<T>();
        return WithBinaryOp<T>(*opcode, [&](auto op) {
          int64_t out = 0;
          size_t linear = 0;
          const size_t inner = in_dims.empty() ? 1 : static_cast<size_t>(in_dims.back());
          const int64_t inner_stride = in_dims.empty() ? 0 : out_strides.back();
          do {
            // The innermost dimension is a tight loop: a row fold or a row map.
            if (inner_stride == 0) {
              T value = acc[static_cast<size_t>(out)];
              for (size_t j = 0; j < inner; ++j) value = op(value, in[linear + j]);
              acc[static_cast<size_t>(out)] = value;
            } else {
              for (size_t j = 0; j < inner; ++j)
                acc[static_cast<size_t>(out) + j] = op(acc[static_cast<size_t>(out) + j], in[linear + j]);
            }
            linear += inner;
            if (index.empty()) break;
            index.back() = static_cast<int64_t>(inner) - 1;
            out = 0;
            if (!NextIndex(in_dims, index)) break;
            for (size_t d = 0; d < index.size(); ++d) out += index[d] * out_strides[d];
          } while (true);
        });
      });
      KILN_RETURN_IF_ERROR(status);
      return PackResults(std::move(accumulators));
    }
  }
  // General path: call the reducer with (accumulators..., inputs...).
  std::vector<ElementType> argument_types = types;
  argument_types.insert(argument_types.end(), types.begin(), types.end());
  ScalarCall call(*context.runner, reducer, argument_types);
  int64_t linear = 0;
  do {
    const int64_t out = Linear(index, out_strides);
    for (size_t i = 0; i < count; ++i) {
      call.Set(i, accumulators[i], out);
      call.Set(count + i, *operands[i], linear);
    }
    KILN_ASSIGN_OR_RETURN(Literal result, call.Call());
    KILN_RETURN_IF_ERROR(CheckScalarResult(result, types, "reduce"));
    for (size_t i = 0; i < count; ++i) CopyElement(ScalarCall::Leaf(result, i), 0, accumulators[i], out);
    ++linear;
  } while (NextIndex(in_dims, index));
  return PackResults(std::move(accumulators));
}

StatusOr<Literal> EvaluateReduceWindow(const Instruction& instruction, Operands operands,
                                       EvalContext& context) {
  const size_t count = operands.size() / 2;
  if (count == 0 || operands.size() != 2 * count || instruction.called.size() != 1) {
    return Internal("reduce-window needs N arrays, N initial values and a computation");
  }
  const Window& window = instruction.attrs.window;
  const std::vector<int64_t>& in_dims = operands[0]->shape().dimensions();
  const size_t rank = in_dims.size();
  KILN_RETURN_IF_ERROR(CheckWindow(window, static_cast<int64_t>(rank), "reduce-window"));
  const std::vector<Shape> out_shapes = ResultLeaves(instruction.shape);
  if (out_shapes.size() != count) return Internal("reduce-window result arity mismatch");
  const std::vector<int64_t>& out_dims = out_shapes[0].dimensions();
  std::vector<int64_t> window_dims;
  for (const WindowDimension& w : window.dimensions) window_dims.push_back(w.size);
  const std::vector<int64_t> in_strides = RowMajorStrides(in_dims);

  std::vector<ElementType> types;
  std::vector<Literal> results;
  for (size_t i = 0; i < count; ++i) {
    if (operands[i]->shape().dimensions() != in_dims || operands[count + i]->element_count() != 1 ||
        out_shapes[i].dimensions() != out_dims) {
      return InvalidArgument("reduce-window operands must share dimensions and have scalar inits");
    }
    types.push_back(operands[i]->shape().element_type());
    results.push_back(Filled(out_shapes[i], *operands[count + i]));
  }
  if (results[0].element_count() == 0) return PackResults(std::move(results));
  int64_t window_count = 1;
  for (int64_t size : window_dims) window_count *= size;
  if (window_count == 0) return PackResults(std::move(results));

  const Computation& reducer = *instruction.called[0];
  std::optional<Opcode> simple = count == 1 ? SimpleBinaryComputation(reducer) : std::nullopt;
  if (simple && reducer.root()->shape.element_type() != types[0]) simple.reset();
  std::vector<ElementType> argument_types = types;
  argument_types.insert(argument_types.end(), types.begin(), types.end());
  ScalarCall call(*context.runner, reducer, argument_types);

  std::vector<int64_t> out_index(rank, 0), window_index(rank, 0), in_index(rank, 0);
  int64_t out = 0;
  do {
    if (simple) {
      Status status = DispatchElementType(types[0], [&](auto tag) -> Status {
        using T = decltype(tag);
        auto in = operands[0]->data<T>();
        T& acc = results[0].data<T>()[static_cast<size_t>(out)];
        return WithBinaryOp<T>(*simple, [&](auto op) {
          std::fill(window_index.begin(), window_index.end(), 0);
          do {
            if (WindowSource(window, out_index, window_index, in_dims, in_index)) {
              acc = op(acc, in[static_cast<size_t>(Linear(in_index, in_strides))]);
            }
          } while (NextIndex(window_dims, window_index));
        });
      });
      KILN_RETURN_IF_ERROR(status);
    } else {
      std::fill(window_index.begin(), window_index.end(), 0);
      do {
        if (!WindowSource(window, out_index, window_index, in_dims, in_index)) continue;
        const int64_t source = Linear(in_index, in_strides);
        for (size_t i = 0; i < count; ++i) {
          call.Set(i, results[i], out);
          call.Set(count + i, *operands[i], source);
        }
        KILN_ASSIGN_OR_RETURN(Literal result, call.Call());
        KILN_RETURN_IF_ERROR(CheckScalarResult(result, types, "reduce-window"));
        for (size_t i = 0; i < count; ++i) CopyElement(ScalarCall::Leaf(result, i), 0, results[i], out);
      } while (NextIndex(window_dims, window_index));
    }
    ++out;
  } while (NextIndex(out_dims, out_index));
  return PackResults(std::move(results));
}

StatusOr<Literal> EvaluateSelectAndScatter(const Instruction& instruction, Operands operands,
                                           EvalContext& context) {
  if (operands.size() != 3 || instruction.called.size() != 2) {
    return Internal("select-and-scatter needs operand, source, init and two computations");
  }
  const Literal& operand = *operands[0];
  const Literal& source = *operands[1];
  const Window& window = instruction.attrs.window;
  const std::vector<int64_t>& in_dims = operand.shape().dimensions();
  const size_t rank = in_dims.size();
  KILN_RETURN_IF_ERROR(CheckWindow(window, static_cast<int64_t>(rank), "select-and-scatter"));
  const ElementType type = operand.shape().element_type();
  if (source.shape().element_type() != type || operands[2]->shape().element_type() != type ||
      source.shape().rank() != static_cast<int64_t>(rank)) {
    return InvalidArgument("select-and-scatter operand, source and init must share a type");
  }
  std::vector<int64_t> window_dims;
  for (const WindowDimension& w : window.dimensions) window_dims.push_back(w.size);
  const std::vector<int64_t> in_strides = RowMajorStrides(in_dims);
  Literal result = Filled(operand.shape(), *operands[2]);
  if (source.element_count() == 0) return result;

  ScalarCall select(*context.runner, *instruction.called[0], {type, type});
  ScalarCall scatter(*context.runner, *instruction.called[1], {type, type});
  const std::vector<int64_t>& source_dims = source.shape().dimensions();
  std::vector<int64_t> out_index(rank, 0), window_index(rank, 0), in_index(rank, 0);
  int64_t source_linear = 0;
  do {
    // The first element in window order wins unless `select` prefers a later one.
    int64_t selected = -1;
    std::fill(window_index.begin(), window_index.end(), 0);
    if (!window_dims.empty() || rank == 0) {
      do {
        if (!WindowSource(window, out_index, window_index, in_dims, in_index)) continue;
        const int64_t candidate = Linear(in_index, in_strides);
        if (selected < 0) {
          selected = candidate;
          continue;
        }
        select.Set(0, operand, selected);
        select.Set(1, operand, candidate);
        KILN_ASSIGN_OR_RETURN(Literal keep, select.Call());
        KILN_RETURN_IF_ERROR(CheckScalarResult(keep, {ElementType::kPred}, "select-and-scatter select"));
        if (!keep.data<bool>()[0]) selected = candidate;
      } while (NextIndex(window_dims, window_index));
    }
    if (selected >= 0) {
      scatter.Set(0, result, selected);
      scatter.Set(1, source, source_linear);
      KILN_ASSIGN_OR_RETURN(Literal combined, scatter.Call());
      KILN_RETURN_IF_ERROR(CheckScalarResult(combined, {type}, "select-and-scatter scatter"));
      CopyElement(ScalarCall::Leaf(combined, 0), 0, result, selected);
    }
    ++source_linear;
  } while (NextIndex(source_dims, out_index));
  return result;
}

StatusOr<Literal> EvaluateMap(const Instruction& instruction, Operands operands, EvalContext& context) {
  if (instruction.called.size() != 1) return Internal("map needs one computation");
  Literal result(instruction.shape);
  const int64_t count = result.element_count();
  std::vector<ElementType> types;
  for (const Literal* operand : operands) {
    if (operand->element_count() != count) {
      return InvalidArgument("map operand ", operand->shape().ToString(), " does not match result ",
                             instruction.shape.ToString());
    }
    types.push_back(operand->shape().element_type());
  }
  ScalarCall call(*context.runner, *instruction.called[0], types);
  for (int64_t i = 0; i < count; ++i) {
    for (size_t k = 0; k < operands.size(); ++k) call.Set(k, *operands[k], i);
    KILN_ASSIGN_OR_RETURN(Literal value, call.Call());
    KILN_RETURN_IF_ERROR(CheckScalarResult(value, {instruction.shape.element_type()}, "map"));
    CopyElement(ScalarCall::Leaf(value, 0), 0, result, i);
  }
  return result;
}

}  // namespace kiln::interpreter
