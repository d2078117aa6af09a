// Shape inference of ops that move data without computing on it: broadcast,
// reshape, transpose, reverse, concatenate, pad, slices, iota, tuples,
// get-dimension-size.
#include "core/shape_inference_internal.h"

namespace kiln::shape_inference_internal {
namespace {

StatusOr<Shape> InferBroadcast(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 1));
  const Shape& operand = request.operands[0];
  KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
  KILN_ASSIGN_OR_RETURN(Shape declared, RequireDeclared(request));
  KILN_RETURN_IF_ERROR(ExpectArray(request, declared, "result"));
  if (declared.element_type() != operand.element_type()) {
    return OpError(request, "result ", declared.ToString(), " must have the element type of operand ",
                   operand.ToString());
  }
  const auto& dims = request.attrs.dimensions;
  if (static_cast<int64_t>(dims.size()) != operand.rank()) {
    return OpError(request, "dimensions ", DimsToString(dims), " must map each of the ", operand.rank(),
                   " dimensions of operand ", operand.ToString(), " into ", declared.ToString());
  }
  KILN_RETURN_IF_ERROR(CheckDimensionList(request, dims, declared.rank(), "dimensions", /*sorted=*/true));
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t in = operand.dimensions(static_cast<int64_t>(i));
    const int64_t out = declared.dimensions(dims[i]);
    if (in != out && in != 1) {
      return OpError(request, "operand ", operand.ToString(), " dimension ", i, " (size ", in,
                     ") cannot broadcast to result ", declared.ToString(), " dimension ", dims[i], " (size ",
                     out, ")");
    }
  }
  return declared;
}

StatusOr<Shape> InferReshape(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 1));
  const Shape& operand = request.operands[0];
  KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
  KILN_ASSIGN_OR_RETURN(Shape declared, RequireDeclared(request));
  KILN_RETURN_IF_ERROR(ExpectArray(request, declared, "result"));
  if (declared.element_type() != operand.element_type() ||
      declared.element_count() != operand.element_count()) {
    return OpError(request, "cannot reshape ", operand.ToString(), " (", operand.element_count(),
                   " elements) to ", declared.ToString(), " (", declared.element_count(),
                   " elements); expected equal element counts and types");
  }
  return declared;
}

StatusOr<Shape> InferTranspose(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 1));
  const Shape& operand = request.operands[0];
  KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
  const auto& perm = request.attrs.dimensions;
  if (static_cast<int64_t>(perm.size()) != operand.rank()) {
    return OpError(request, "permutation ", DimsToString(perm), " must have ", operand.rank(),
                   " entries for operand ", operand.ToString());
  }
  KILN_RETURN_IF_ERROR(CheckDimensionList(request, perm, operand.rank(), "permutation"));
  std::vector<int64_t> dims;
  for (int64_t d : perm) dims.push_back(operand.dimensions(d));
  return Shape(operand.element_type(), dims);
}

StatusOr<Shape> InferReverse(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 1));
  const Shape& operand = request.operands[0];
  KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
  KILN_RETURN_IF_ERROR(CheckDimensionList(request, request.attrs.dimensions, operand.rank(), "dimensions"));
  return Shape(operand.element_type(), operand.dimensions());
}

StatusOr<Shape> InferConcatenate(const OpRequest& request) {
  if (request.operands.empty()) return OpError(request, "needs at least one operand");
  if (request.attrs.dimensions.size() != 1) {
    return OpError(request, "dimensions ", DimsToString(request.attrs.dimensions),
                   " must name exactly one dimension");
  }
  const Shape& first = request.operands[0];
  for (const Shape& operand : request.operands)
    KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
  const int64_t dim = request.attrs.dimensions[0];
  if (dim < 0 || dim >= first.rank()) {
    return OpError(request, "dimension ", dim, " is out of range for operands ",
                   ShapesToString(request.operands));
  }
  std::vector<int64_t> dims = first.dimensions();
  for (size_t i = 1; i < request.operands.size(); ++i) {
    const Shape& operand = request.operands[i];
    bool compatible = operand.rank() == first.rank() && operand.element_type() == first.element_type();
    for (int64_t d = 0; compatible && d < first.rank(); ++d) {
      if (d != dim && operand.dimensions(d) != first.dimensions(d)) compatible = false;
    }
    if (!compatible) {
      return OpError(request, "operands ", ShapesToString(request.operands),
                     " must have the same element type and rank and equal sizes except in dimension ", dim);
    }
    dims[static_cast<size_t>(dim)] += operand.dimensions(dim);
  }
  return Shape(first.element_type(), dims);
}

StatusOr<Shape> InferPad(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 2));
  const Shape& operand = request.operands[0];
  const Shape& value = request.operands[1];
  KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
  KILN_RETURN_IF_ERROR(ExpectScalar(request, value, "padding value"));
  if (value.element_type() != operand.element_type()) {
    return OpError(request, "padding value ", value.ToString(), " must have the element type of operand ",
                   operand.ToString());
  }
  const auto& padding = request.attrs.padding;
  if (static_cast<int64_t>(padding.size()) != operand.rank()) {
    return OpError(request, "padding config has ", padding.size(), " dimensions; operand ",
                   operand.ToString(), " has rank ", operand.rank());
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const PaddingDimension& p = padding[static_cast<size_t>(i)];
    const int64_t d = operand.dimensions(i);
    if (p.interior < 0) {
      return OpError(request, "interior padding ", p.interior, " of dimension ", i, " must be >= 0");
    }
    const int64_t size = p.low + p.high + d + (d > 0 ? (d - 1) * p.interior : 0);
    if (size < 0) {
      return OpError(request, "padding ", p.low, "_", p.high, "_", p.interior, " of dimension ", i,
                     " of operand ", operand.ToString(), " gives a negative size ", size);
    }
    dims.push_back(size);
  }
  return Shape(operand.element_type(), dims);
}

StatusOr<Shape> InferSlice(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 1));
  const Shape& operand = request.operands[0];
  KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
  const Attributes& a = request.attrs;
  const auto rank = static_cast<size_t>(operand.rank());
  if (a.slice_starts.size() != rank || a.slice_limits.size() != rank || a.slice_strides.size() != rank) {
    return OpError(request, "starts ", DimsToString(a.slice_starts), ", limits ",
                   DimsToString(a.slice_limits), " and strides ", DimsToString(a.slice_strides),
                   " must each have ", rank, " entries for operand ", operand.ToString());
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t start = a.slice_starts[i];
    const int64_t limit = a.slice_limits[i];
    const int64_t stride = a.slice_strides[i];
    const int64_t size = operand.dimensions(static_cast<int64_t>(i));
    if (start < 0 || limit < start || limit > size || stride < 1) {
      return OpError(request, "slice [", start, ":", limit, ":", stride, "] of dimension ", i, " of operand ",
                     operand.ToString(), " is out of range; expected 0 <= start <= limit <= ", size,
                     " and stride >= 1");
    }
    dims.push_back((limit - start + stride - 1) / stride);
  }
  return Shape(operand.element_type(), dims);
}

Status CheckStartIndices(const OpRequest& request, std::span<const Shape> indices, int64_t rank) {
  if (static_cast<int64_t>(indices.size()) != rank) {
    return OpError(request, "takes one scalar start index per operand dimension: expected ", rank,
                   " indices but got ", indices.size(), " (", ShapesToString(indices), ")");
  }
  for (const Shape& index : indices) {
    if (!index.IsScalar() || !IsIntegral(index.element_type())) {
      return OpError(request, "start index ", index.ToString(), " must be an integer scalar");
    }
    if (index.element_type() != indices[0].element_type()) {
      return OpError(request, "start indices ", ShapesToString(indices), " must have one element type");
    }
  }
  return OkStatus();
}

StatusOr<Shape> InferDynamicSlice(const OpRequest& request) {
  if (request.operands.empty()) return OpError(request, "needs an operand");
  const Shape& operand = request.operands[0];
  KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
  KILN_RETURN_IF_ERROR(CheckStartIndices(request, request.operands.subspan(1), operand.rank()));
  const auto& sizes = request.attrs.dynamic_slice_sizes;
  if (static_cast<int64_t>(sizes.size()) != operand.rank()) {
    return OpError(request, "slice sizes ", DimsToString(sizes), " must have ", operand.rank(),
                   " entries for operand ", operand.ToString());
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const int64_t size = sizes[static_cast<size_t>(i)];
    if (size < 0 || size > operand.dimensions(i)) {
      return OpError(request, "slice size ", size, " of dimension ", i, " is out of range for operand ",
                     operand.ToString());
    }
  }
  return Shape(operand.element_type(), sizes);
}

StatusOr<Shape> InferDynamicUpdateSlice(const OpRequest& request) {
  if (request.operands.size() < 2) return OpError(request, "needs an operand and an update");
  const Shape& operand = request.operands[0];
  const Shape& update = request.operands[1];
  KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
  KILN_RETURN_IF_ERROR(ExpectArray(request, update, "update"));
  KILN_RETURN_IF_ERROR(CheckStartIndices(request, request.operands.subspan(2), operand.rank()));
  bool fits = update.rank() == operand.rank() && update.element_type() == operand.element_type();
  for (int64_t i = 0; fits && i < operand.rank(); ++i) fits = update.dimensions(i) <= operand.dimensions(i);
  if (!fits) {
    return OpError(request, "update ", update.ToString(), " must have the rank and element type of operand ",
                   operand.ToString(), " and fit inside it");
  }
  return Shape(operand.element_type(), operand.dimensions());
}

StatusOr<Shape> InferIota(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 0));
  KILN_ASSIGN_OR_RETURN(Shape declared, RequireDeclared(request));
  KILN_RETURN_IF_ERROR(ExpectArray(request, declared, "result"));
  if (declared.element_type() == ElementType::kPred) {
    return OpError(request, "result ", declared.ToString(), " must be numeric, not pred");
  }
  if (request.attrs.iota_dimension < 0 || request.attrs.iota_dimension >= declared.rank()) {
    return OpError(request, "iota_dimension ", request.attrs.iota_dimension, " is out of range for ",
                   declared.ToString());
  }
  return declared;
}

StatusOr<Shape> InferGetTupleElement(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 1));
  const Shape& tuple = request.operands[0];
  if (!tuple.IsTuple()) return OpError(request, "operand ", tuple.ToString(), " must be a tuple");
  const int64_t index = request.attrs.tuple_index;
  if (index < 0 || index >= static_cast<int64_t>(tuple.tuple_shapes().size())) {
    return OpError(request, "index ", index, " is out of range for tuple ", tuple.ToString());
  }
  return tuple.tuple_shapes(index);
}

StatusOr<Shape> InferGetDimensionSize(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 1));
  const Shape& operand = request.operands[0];
  KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
  if (request.attrs.dimensions.size() != 1) {
    return OpError(request, "dimensions ", DimsToString(request.attrs.dimensions),
                   " must name one dimension");
  }
  KILN_RETURN_IF_ERROR(CheckDimensionList(request, request.attrs.dimensions, operand.rank(), "dimensions"));
  return Shape::Scalar(ElementType::kS32);
}

}  // namespace

StatusOr<Shape> InferShapeManipulation(const OpRequest& request) {
  switch (request.opcode) {
    case Opcode::kBroadcast: return InferBroadcast(request);
    case Opcode::kReshape: return InferReshape(request);
    case Opcode::kTranspose: return InferTranspose(request);
    case Opcode::kReverse: return InferReverse(request);
    case Opcode::kConcatenate: return InferConcatenate(request);
    case Opcode::kPad: return InferPad(request);
    case Opcode::kSlice: return InferSlice(request);
    case Opcode::kDynamicSlice: return InferDynamicSlice(request);
    case Opcode::kDynamicUpdateSlice: return InferDynamicUpdateSlice(request);
    case Opcode::kIota: return InferIota(request);
    case Opcode::kTuple:
      return Shape::Tuple(std::vector<Shape>(request.operands.begin(), request.operands.end()));
    case Opcode::kGetTupleElement: return InferGetTupleElement(request);
    case Opcode::kGetDimensionSize: return InferGetDimensionSize(request);
    default: return OpError(request, "is not a shape manipulation op");
  }
}

}  // namespace kiln::shape_inference_internal
