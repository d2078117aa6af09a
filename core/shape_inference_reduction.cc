// Shape inference of ops that apply a called computation over an array:
// reduce, reduce-window, select-and-scatter, sort, all-reduce, map; and the
// batch-norm family.
#include <algorithm>

#include "core/shape_inference_internal.h"

namespace kiln::shape_inference_internal {
namespace {

Shape TupleOrSingle(std::vector<Shape> shapes) {
  if (shapes.size() == 1) return shapes[0];
  return Shape::Tuple(std::move(shapes));
}

// Splits N operands + N init values and checks the operands share dims and
// the inits are scalars; returns the accumulator types (the inits').
StatusOr<std::vector<ElementType>> SplitOperandsAndInits(const OpRequest& request) {
  const size_t count = request.operands.size();
  if (count < 2 || count % 2 != 0) {
    return OpError(request, "takes N operands followed by N init values; got ", count, " (",
                   ShapesToString(request.operands), ")");
  }
  const size_t n = count / 2;
  std::vector<ElementType> types;
  for (size_t i = 0; i < n; ++i) {
    const Shape& operand = request.operands[i];
    const Shape& init = request.operands[n + i];
    KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
    KILN_RETURN_IF_ERROR(ExpectScalar(request, init, "init value"));
    if (operand.dimensions() != request.operands[0].dimensions()) {
      return OpError(request, "operands ", ShapesToString(request.operands.subspan(0, n)),
                     " must have equal dimensions");
    }
    if (init.element_type() != operand.element_type()) {
      return OpError(request, "init value ", init.ToString(), " must have the element type of operand ",
                     operand.ToString());
    }
    types.push_back(init.element_type());
  }
  return types;
}

StatusOr<Shape> InferReduce(const OpRequest& request) {
  KILN_ASSIGN_OR_RETURN(std::vector<ElementType> types, SplitOperandsAndInits(request));
  KILN_RETURN_IF_ERROR(ExpectCalledCount(request, 1));
  KILN_RETURN_IF_ERROR(CheckReducer(request, request.called[0], types, "to_apply"));
  const Shape& operand = request.operands[0];
  const auto& dims = request.attrs.dimensions;
  KILN_RETURN_IF_ERROR(CheckDimensionList(request, dims, operand.rank(), "dimensions"));
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) kept.push_back(operand.dimensions(d));
  }
  std::vector<Shape> results;
  for (ElementType type : types) results.emplace_back(type, kept);
  return TupleOrSingle(results);
}

StatusOr<Shape> InferReduceWindow(const OpRequest& request) {
  KILN_ASSIGN_OR_RETURN(std::vector<ElementType> types, SplitOperandsAndInits(request));
  KILN_RETURN_IF_ERROR(ExpectCalledCount(request, 1));
  KILN_RETURN_IF_ERROR(CheckReducer(request, request.called[0], types, "to_apply"));
  KILN_ASSIGN_OR_RETURN(
      std::vector<int64_t> dims,
      InferWindowOutputDims(request, request.operands[0].dimensions(), request.attrs.window));
  std::vector<Shape> results;
  for (ElementType type : types) results.emplace_back(type, dims);
  return TupleOrSingle(results);
}

StatusOr<Shape> InferSelectAndScatter(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 3));
  KILN_RETURN_IF_ERROR(ExpectCalledCount(request, 2));
  const Shape& operand = request.operands[0];
  const Shape& source = request.operands[1];
  const Shape& init = request.operands[2];
  KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
  KILN_RETURN_IF_ERROR(ExpectArray(request, source, "source"));
  KILN_RETURN_IF_ERROR(ExpectScalar(request, init, "init value"));
  const ElementType type = operand.element_type();
  if (source.element_type() != type || init.element_type() != type) {
    return OpError(request, "operand ", operand.ToString(), ", source ", source.ToString(),
                   " and init value ", init.ToString(), " must share an element type");
  }
  const ProgramShape& select = request.called[0];
  const Shape scalar = Shape::Scalar(type);
  if (select.parameters.size() != 2 || !select.parameters[0].Compatible(scalar) ||
      !select.parameters[1].Compatible(scalar) ||
      !select.result.Compatible(Shape::Scalar(ElementType::kPred))) {
    return OpError(request, "select computation ", select.ToString(), " must be (", scalar.ToString(), ", ",
                   scalar.ToString(), ") -> pred[]");
  }
  const ElementType scatter_type[] = {type};
  KILN_RETURN_IF_ERROR(CheckReducer(request, request.called[1], scatter_type, "scatter"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> window_dims,
                        InferWindowOutputDims(request, operand.dimensions(), request.attrs.window));
  if (source.dimensions() != window_dims) {
    return OpError(request, "source ", source.ToString(), " must have the window output dimensions ",
                   DimsToString(window_dims), " of operand ", operand.ToString());
  }
  return Shape(type, operand.dimensions());
}

// topk(x) over the last dimension: (values[..., k], s32 indices[..., k]).
StatusOr<Shape> InferTopK(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 1));
  KILN_RETURN_IF_ERROR(ExpectCalledCount(request, 0));
  const Shape& operand = request.operands[0];
  KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
  if (operand.rank() < 1) return OpError(request, "operand ", operand.ToString(), " must have rank >= 1");
  if (IsComplex(operand.element_type()) || operand.element_type() == ElementType::kPred) {
    return OpError(request, "operand ", operand.ToString(), " must be integer or floating point");
  }
  const int64_t k = request.attrs.top_k;
  const int64_t last = operand.dimensions(operand.rank() - 1);
  if (k < 0 || k > last) {
    return OpError(request, "k=", k, " must lie in [0, ", last, "] for operand ", operand.ToString());
  }
  std::vector<int64_t> dims = operand.dimensions();
  dims.back() = k;
  return Shape::Tuple({Shape(operand.element_type(), dims), Shape(ElementType::kS32, dims)});
}

StatusOr<Shape> InferSort(const OpRequest& request) {
  if (request.operands.empty()) return OpError(request, "needs at least one operand");
  KILN_RETURN_IF_ERROR(ExpectCalledCount(request, 1));
  const Shape& first = request.operands[0];
  std::vector<Shape> results;
  for (const Shape& operand : request.operands) {
    KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
    if (operand.dimensions() != first.dimensions()) {
      return OpError(request, "operands ", ShapesToString(request.operands), " must have equal dimensions");
    }
    results.emplace_back(operand.element_type(), operand.dimensions());
  }
  if (request.attrs.dimensions.size() != 1) {
    return OpError(request, "dimensions ", DimsToString(request.attrs.dimensions),
                   " must name one dimension");
  }
  const int64_t dim = request.attrs.dimensions[0];
  if (dim < -first.rank() || dim >= first.rank()) {
    return OpError(request, "dimension ", dim, " is out of range for operand ", first.ToString());
  }
  const ProgramShape& comparator = request.called[0];
  const size_t n = request.operands.size();
  if (comparator.parameters.size() != 2 * n) {
    return OpError(request, "comparator takes ", comparator.parameters.size(), " parameters; expected ",
                   2 * n);
  }
  for (size_t i = 0; i < 2 * n; ++i) {
    const Shape expected = Shape::Scalar(request.operands[i / 2].element_type());
    if (!comparator.parameters[i].Compatible(expected)) {
      return OpError(request, "comparator parameter ", i, " has shape ", comparator.parameters[i].ToString(),
                     "; expected ", expected.ToString());
    }
  }
  if (!comparator.result.Compatible(Shape::Scalar(ElementType::kPred))) {
    return OpError(request, "comparator returns ", comparator.result.ToString(), "; expected pred[]");
  }
  return TupleOrSingle(results);
}

StatusOr<Shape> InferAllReduce(const OpRequest& request) {
  if (request.operands.empty()) return OpError(request, "needs at least one operand");
  KILN_RETURN_IF_ERROR(ExpectCalledCount(request, 1));
  std::vector<Shape> results;
  for (const Shape& operand : request.operands) {
    KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
    if (operand.element_type() != request.operands[0].element_type()) {
      return OpError(request, "operands ", ShapesToString(request.operands), " must share an element type");
    }
    results.emplace_back(operand.element_type(), operand.dimensions());
  }
  const ElementType type[] = {request.operands[0].element_type()};
  KILN_RETURN_IF_ERROR(CheckReducer(request, request.called[0], type, "to_apply"));
  return TupleOrSingle(results);
}

StatusOr<Shape> InferMap(const OpRequest& request) {
  if (request.operands.empty()) return OpError(request, "needs at least one operand");
  KILN_RETURN_IF_ERROR(ExpectCalledCount(request, 1));
  const Shape& first = request.operands[0];
  for (const Shape& operand : request.operands) {
    KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
    if (operand.dimensions() != first.dimensions()) {
      return OpError(request, "operands ", ShapesToString(request.operands), " must have equal dimensions");
    }
  }
  const auto& dims = request.attrs.dimensions;
  if (!dims.empty()) {
    bool identity = static_cast<int64_t>(dims.size()) == first.rank();
    for (size_t i = 0; identity && i < dims.size(); ++i) identity = dims[i] == static_cast<int64_t>(i);
    if (!identity) {
      return OpError(request, "dimensions ", DimsToString(dims), " must be all dimensions of ",
                     first.ToString(), " in order");
    }
  }
  const ProgramShape& computation = request.called[0];
  if (computation.parameters.size() != request.operands.size()) {
    return OpError(request, "to_apply computation takes ", computation.parameters.size(),
                   " parameters; expected ", request.operands.size());
  }
  for (size_t i = 0; i < request.operands.size(); ++i) {
    const Shape expected = Shape::Scalar(request.operands[i].element_type());
    if (!computation.parameters[i].Compatible(expected)) {
      return OpError(request, "to_apply parameter ", i, " has shape ", computation.parameters[i].ToString(),
                     "; expected ", expected.ToString());
    }
  }
  if (!computation.result.IsScalar()) {
    return OpError(request, "to_apply returns ", computation.result.ToString(), "; expected a scalar");
  }
  return Shape(computation.result.element_type(), first.dimensions());
}

// Operand (float array), then per-feature rank-1 arrays of its type and the
// feature dimension's size.
Status CheckBatchNormOperands(const OpRequest& request, size_t count) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, count));
  const Shape& operand = request.operands[0];
  KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
  if (!IsFloating(operand.element_type()) || operand.rank() < 1) {
    return OpError(request, "operand ", operand.ToString(), " must be a floating-point array of rank >= 1");
  }
  const int64_t feature_index = request.attrs.feature_index;
  if (feature_index < 0 || feature_index >= operand.rank()) {
    return OpError(request, "feature_index ", feature_index, " is out of range for operand ",
                   operand.ToString());
  }
  const Shape feature(operand.element_type(), {operand.dimensions(feature_index)});
  for (size_t i = 1; i < count; ++i) {
    const Shape& shape = request.operands[i];
    const bool is_grad_output = request.opcode == Opcode::kBatchNormGrad && i == count - 1;
    const Shape& expected = is_grad_output ? operand : feature;
    if (!shape.Compatible(expected)) {
      return OpError(request, "operand ", i, " has shape ", shape.ToString(), "; expected ",
                     expected.ToString());
    }
  }
  return OkStatus();
}

StatusOr<Shape> InferBatchNorm(const OpRequest& request) {
  const size_t count = request.opcode == Opcode::kBatchNormTraining ? 3 : 5;
  KILN_RETURN_IF_ERROR(CheckBatchNormOperands(request, count));
  const Shape& operand = request.operands[0];
  const Shape operand_result(operand.element_type(), operand.dimensions());
  if (request.opcode == Opcode::kBatchNormInference) return operand_result;
  const Shape feature(operand.element_type(), {operand.dimensions(request.attrs.feature_index)});
  return Shape::Tuple({operand_result, feature, feature});
}

}  // namespace

StatusOr<Shape> InferReduction(const OpRequest& request) {
  switch (request.opcode) {
    case Opcode::kReduce: return InferReduce(request);
    case Opcode::kReduceWindow: return InferReduceWindow(request);
    case Opcode::kSelectAndScatter: return InferSelectAndScatter(request);
    case Opcode::kSort: return InferSort(request);
    case Opcode::kTopK: return InferTopK(request);
    case Opcode::kAllReduce: return InferAllReduce(request);
    case Opcode::kMap: return InferMap(request);
    default: return InferBatchNorm(request);
  }
}

}  // namespace kiln::shape_inference_internal
