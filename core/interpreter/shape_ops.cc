// Data movement ops: broadcast, reshape, transpose, reverse, concatenate,
// pad, slice, dynamic-slice, dynamic-update-slice, iota.
#include <algorithm>
#include <cstring>

#include "core/interpreter/array_util.h"
#include "core/interpreter/kernels.h"
#include "core/interpreter/scalar_ops.h"

namespace kiln::interpreter {
namespace {

int ElementBytes(const Shape& shape) { return ByteWidth(shape.element_type()); }

// Start indices of dynamic-slice/dynamic-update-slice: either one rank-1
// array (the seed's form) or one scalar per dimension (HLO's form), clamped
// so that a slice of `sizes` fits in `dims`.
StatusOr<std::vector<int64_t>> ClampedStarts(Operands index_operands, const std::vector<int64_t>& dims,
                                             std::span<const int64_t> sizes, const char* op) {
  const size_t rank = dims.size();
  std::vector<int64_t> starts;
  if (index_operands.size() == 1 && index_operands[0]->shape().rank() == 1) {
    const Literal& vector = *index_operands[0];
    for (int64_t i = 0; i < vector.element_count(); ++i) starts.push_back(IndexValue(vector, i));
  } else {
    for (const Literal* scalar : index_operands) {
      if (scalar->element_count() != 1) return InvalidArgument(op, " start indices must be scalars");
      starts.push_back(IndexValue(*scalar, 0));
    }
  }
  if (starts.size() != rank || sizes.size() != rank) {
    return InvalidArgument(op, " got ", starts.size(), " start indices and ", sizes.size(),
                           " sizes for a rank-", rank, " operand");
  }
  for (size_t d = 0; d < rank; ++d) {
    if (sizes[d] < 0 || sizes[d] > dims[d]) {
      return InvalidArgument(op, " size ", sizes[d], " does not fit dimension ", d, " of size ", dims[d]);
    }
    starts[d] = std::clamp<int64_t>(starts[d], 0, dims[d] - sizes[d]);
  }
  return starts;
}

}  // namespace

StatusOr<Literal> EvaluateBroadcast(const Instruction& instruction, Operands operands) {
  const Literal& input = *operands[0];
  const Shape& out = instruction.shape;
  std::vector<int64_t> mapping = instruction.attrs.dimensions;
  const int64_t in_rank = input.shape().rank();
  if (mapping.empty() && in_rank > 0) {
    // Seed form: the operand's dimensions are the minor ones of the result.
    for (int64_t i = 0; i < in_rank; ++i) mapping.push_back(out.rank() - in_rank + i);
  }
  if (static_cast<int64_t>(mapping.size()) != in_rank) {
    return InvalidArgument("broadcast dimensions do not match operand rank ", in_rank);
  }
  const std::vector<int64_t> in_strides = RowMajorStrides(input.shape().dimensions());
  std::vector<int64_t> strides(static_cast<size_t>(out.rank()), 0);
  for (int64_t i = 0; i < in_rank; ++i) {
    const int64_t target = mapping[static_cast<size_t>(i)];
    if (target < 0 || target >= out.rank() || out.dimensions(target) != input.shape().dimensions(i)) {
      return InvalidArgument("broadcast of ", input.shape().ToString(), " to ", out.ToString(),
                             " has a bad dimension mapping");
    }
    strides[static_cast<size_t>(target)] = in_strides[static_cast<size_t>(i)];
  }
  Literal result(out);
  StridedCopy(input.raw().data(), 0, strides, out.dimensions(), result.raw().data(), ElementBytes(out));
  return result;
}

StatusOr<Literal> EvaluateReshape(const Instruction& instruction, Operands operands) {
  return operands[0]->Reshape(instruction.shape.dimensions());
}

StatusOr<Literal> EvaluateTranspose(const Instruction& instruction, Operands operands) {
  const std::vector<int64_t>& permutation = instruction.attrs.dimensions;
  if (static_cast<int64_t>(permutation.size()) != operands[0]->shape().rank()) {
    return InvalidArgument("transpose permutation has the wrong length");
  }
  return TransposeLiteral(*operands[0], permutation);
}

StatusOr<Literal> EvaluateReverse(const Instruction& instruction, Operands operands) {
  const Literal& input = *operands[0];
  const std::vector<int64_t>& dims = input.shape().dimensions();
  std::vector<int64_t> strides = RowMajorStrides(dims);
  int64_t base = 0;
  for (int64_t d : instruction.attrs.dimensions) {
    if (d < 0 || d >= input.shape().rank()) return InvalidArgument("reverse dimension ", d, " out of range");
    const auto i = static_cast<size_t>(d);
    base += (dims[i] - 1) * strides[i];
    strides[i] = -strides[i];
  }
  Literal result(instruction.shape);
  if (result.element_count() == 0) return result;
  StridedCopy(input.raw().data(), base, strides, dims, result.raw().data(), ElementBytes(instruction.shape));
  return result;
}

StatusOr<Literal> EvaluateConcatenate(const Instruction& instruction, Operands operands) {
  const Shape& out = instruction.shape;
  if (instruction.attrs.dimensions.size() != 1) return InvalidArgument("concatenate needs one dimension");
  const int64_t axis = instruction.attrs.dimensions[0];
  if (axis < 0 || axis >= out.rank()) return InvalidArgument("concatenate dimension out of range");
  const int bytes = ElementBytes(out);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out.dimensions(d);
  for (int64_t d = axis + 1; d < out.rank(); ++d) inner *= out.dimensions(d);
  Literal result(out);
  const int64_t out_row = out.dimensions(axis) * inner;
  int64_t column = 0;
  for (const Literal* operand : operands) {
    const int64_t chunk = operand->shape().dimensions(axis) * inner;
    if (operand->element_count() != outer * chunk || column + chunk > out_row) {
      return InvalidArgument("concatenate operand ", operand->shape().ToString(), " does not fit result ",
                             out.ToString());
    }
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(result.raw().data() + (o * out_row + column) * bytes,
                  operand->raw().data() + o * chunk * bytes, static_cast<size_t>(chunk * bytes));
    }
    column += chunk;
  }
  return result;
}

StatusOr<Literal> EvaluatePad(const Instruction& instruction, Operands operands) {
  const Literal& input = *operands[0];
  const Literal& value = *operands[1];
  const Shape& out = instruction.shape;
  const auto& padding = instruction.attrs.padding;
  const int64_t rank = out.rank();
  if (static_cast<int64_t>(padding.size()) != rank || input.shape().rank() != rank) {
    return InvalidArgument("pad config has ", padding.size(), " entries for rank ", rank);
  }
  const int bytes = ElementBytes(out);
  Literal result(out);
  uint8_t* dst = result.raw().data();
  for (int64_t i = 0; i < result.element_count(); ++i)
    std::memcpy(dst + i * bytes, value.raw().data(), bytes);
  if (input.element_count() == 0) return result;
  const std::vector<int64_t> out_strides = RowMajorStrides(out.dimensions());
  const std::vector<int64_t>& in_dims = input.shape().dimensions();
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  const uint8_t* src = input.raw().data();
  int64_t linear = 0;
  do {
    int64_t target = 0;
    bool inside = true;
    for (int64_t d = 0; d < rank; ++d) {
      const auto i = static_cast<size_t>(d);
      const int64_t position = padding[i].low + index[i] * (padding[i].interior + 1);
      if (position < 0 || position >= out.dimensions(d)) {
        inside = false;
        break;
      }
      target += position * out_strides[i];
    }
    if (inside) std::memcpy(dst + target * bytes, src + linear * bytes, bytes);
    ++linear;
  } while (NextIndex(in_dims, index));
  return result;
}

StatusOr<Literal> EvaluateSlice(const Instruction& instruction, Operands operands) {
  const Literal& input = *operands[0];
  const auto& attrs = instruction.attrs;
  const int64_t rank = input.shape().rank();
  if (static_cast<int64_t>(attrs.slice_starts.size()) != rank) {
    return InvalidArgument("slice has ", attrs.slice_starts.size(), " starts for rank ", rank);
  }
  const std::vector<int64_t> in_strides = RowMajorStrides(input.shape().dimensions());
  std::vector<int64_t> strides(static_cast<size_t>(rank));
  int64_t base = 0;
  for (size_t d = 0; d < static_cast<size_t>(rank); ++d) {
    const int64_t step = attrs.slice_strides.empty() ? 1 : attrs.slice_strides[d];
    const int64_t start = attrs.slice_starts[d];
    const int64_t last = start + (instruction.shape.dimensions()[d] - 1) * step;
    if (instruction.shape.dimensions()[d] > 0 && (start < 0 || last >= input.shape().dimensions()[d])) {
      return InvalidArgument("slice of ", input.shape().ToString(), " out of range in dimension ", d);
    }
    base += start * in_strides[d];
    strides[d] = step * in_strides[d];
  }
  Literal result(instruction.shape);
  StridedCopy(input.raw().data(), base, strides, instruction.shape.dimensions(), result.raw().data(),
              ElementBytes(instruction.shape));
  return result;
}

StatusOr<Literal> EvaluateDynamicSlice(const Instruction& instruction, Operands operands) {
  const Literal& input = *operands[0];
  const std::vector<int64_t>& sizes = instruction.shape.dimensions();
  KILN_ASSIGN_OR_RETURN(
      std::vector<int64_t> starts,
      ClampedStarts(operands.subspan(1), input.shape().dimensions(), sizes, "dynamic-slice"));
  const std::vector<int64_t> strides = RowMajorStrides(input.shape().dimensions());
  int64_t base = 0;
  for (size_t d = 0; d < starts.size(); ++d) base += starts[d] * strides[d];
  Literal result(instruction.shape);
  if (result.element_count() == 0) return result;
  StridedCopy(input.raw().data(), base, strides, sizes, result.raw().data(), ElementBytes(instruction.shape));
  return result;
}

StatusOr<Literal> EvaluateDynamicUpdateSlice(const Instruction&, Operands operands) {
  const Literal& input = *operands[0];
  const Literal& update = *operands[1];
  const std::vector<int64_t>& dims = input.shape().dimensions();
  const std::vector<int64_t>& sizes = update.shape().dimensions();
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                        ClampedStarts(operands.subspan(2), dims, sizes, "dynamic-update-slice"));
  Literal result = input;
  if (update.element_count() == 0) return result;
  const int bytes = ElementBytes(input.shape());
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  std::vector<int64_t> index(sizes.size(), 0);
  const size_t rank = sizes.size();
  // Copy the update row by row (its innermost dimension is contiguous).
  const int64_t row = rank == 0 ? 1 : sizes[rank - 1];
  std::vector<int64_t> outer(sizes.begin(), sizes.end());
  if (rank > 0) outer[rank - 1] = 1;
  int64_t source = 0;
  do {
    int64_t target = 0;
    for (size_t d = 0; d < rank; ++d) target += (starts[d] + index[d]) * strides[d];
    std::memcpy(result.raw().data() + target * bytes, update.raw().data() + source * bytes,
                static_cast<size_t>(row * bytes));
    source += row;
  } while (NextIndex(outer, index));
  return result;
}

StatusOr<Literal> EvaluateIota(const Instruction& instruction, Operands) {
  const Shape& shape = instruction.shape;
  const int64_t dimension = instruction.attrs.iota_dimension;
  if (dimension < 0 || dimension >= shape.rank()) {
    return InvalidArgument("iota dimension ", dimension, " out of range for ", shape.ToString());
  }
  Literal result(shape);
  int64_t inner = 1;
  for (int64_t d = dimension + 1; d < shape.rank(); ++d) inner *= shape.dimensions(d);
  const int64_t size = shape.dimensions(dimension);
  return DispatchElementType(shape.element_type(), [&](auto tag) -> StatusOr<Literal> {
    using T = decltype(tag);
    auto out = result.data<T>();
    for (size_t i = 0; i < out.size(); ++i) {
      const auto value = static_cast<int64_t>(i) / inner % size;
      out[i] = ConvertElement<T>(value);
    }
    return std::move(result);
  });
}

}  // namespace kiln::interpreter
