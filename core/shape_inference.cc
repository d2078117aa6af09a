// The single dispatcher of shape inference and the helpers its op families
// share. The families live in core/shape_inference_*.cc.
#include "core/shape_inference.h"

#include <set>
#include <sstream>

#include "core/shape_inference_internal.h"

namespace kiln {
namespace shape_inference_internal {

std::string ShapesToString(std::span<const Shape> shapes) {
  std::ostringstream out;
  for (size_t i = 0; i < shapes.size(); ++i) out << (i ? ", " : "") << shapes[i].ToString();
  return out.str();
}

std::string DimsToString(std::span<const int64_t> dims) {
  std::ostringstream out;
  out << "{";
  for (size_t i = 0; i < dims.size(); ++i) out << (i ? "," : "") << dims[i];
  out << "}";
  return out.str();
}

Status ExpectOperandCount(const OpRequest& request, size_t count) {
  if (request.operands.size() != count) {
    return OpError(request, "takes ", count, " operands but got ", request.operands.size(), " (",
                   ShapesToString(request.operands), ")");
  }
  return OkStatus();
}

Status ExpectCalledCount(const OpRequest& request, size_t count) {
  if (request.called.size() != count) {
    return OpError(request, "expects ", count, " called computations but got ", request.called.size());
  }
  return OkStatus();
}

Status ExpectArray(const OpRequest& request, const Shape& shape, const char* role) {
  if (!shape.IsArray()) {
    return OpError(request, role, " must be an array but has shape ", shape.ToString());
  }
  return OkStatus();
}

Status ExpectScalar(const OpRequest& request, const Shape& shape, const char* role) {
  if (!shape.IsScalar()) {
    return OpError(request, role, " must be a scalar but has shape ", shape.ToString());
  }
  return OkStatus();
}

StatusOr<Shape> RequireDeclared(const OpRequest& request) {
  if (request.declared == nullptr) {
    return OpError(request, "the result shape must be declared; it cannot be inferred from operands (",
                   ShapesToString(request.operands), ")");
  }
  return *request.declared;
}

Status CheckDimensionList(const OpRequest& request, std::span<const int64_t> dims, int64_t rank,
                          const char* what, bool sorted) {
  std::set<int64_t> seen;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i];
    if (d < 0 || d >= rank) {
      return OpError(request, what, " ", DimsToString(dims), ": dimension ", d, " is out of range for rank ",
                     rank);
    }
    if (!seen.insert(d).second) {
      return OpError(request, what, " ", DimsToString(dims), ": dimension ", d, " appears twice");
    }
    if (sorted && i > 0 && dims[i - 1] >= d) {
      return OpError(request, what, " ", DimsToString(dims), " must be strictly increasing");
    }
  }
  return OkStatus();
}

StatusOr<std::vector<int64_t>> InferWindowOutputDims(const OpRequest& request, std::span<const int64_t> base,
                                                     const Window& window) {
  if (window.dimensions.size() != base.size()) {
    return OpError(request, "window has ", window.dimensions.size(), " dimensions; expected ", base.size(),
                   " (the operand rank)");
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < base.size(); ++i) {
    const WindowDimension& w = window.dimensions[i];
    if (w.size < 1 || w.stride < 1 || w.window_dilation < 1 || w.base_dilation < 1) {
      return OpError(request, "window dimension ", i, " has size ", w.size, ", stride ", w.stride,
                     ", window dilation ", w.window_dilation, ", base dilation ", w.base_dilation,
                     "; expected all >= 1");
    }
    const int64_t dilated_base = base[i] == 0 ? 0 : (base[i] - 1) * w.base_dilation + 1;
    const int64_t padded = dilated_base + w.padding_low + w.padding_high;
    if (padded < 0) {
      return OpError(request, "window dimension ", i, ": padding ", w.padding_low, "/", w.padding_high,
                     " leaves a negative size for input size ", base[i]);
    }
    const int64_t dilated_window = (w.size - 1) * w.window_dilation + 1;
    out.push_back(padded < dilated_window ? 0 : (padded - dilated_window) / w.stride + 1);
  }
  return out;
}

Status CheckReducer(const OpRequest& request, const ProgramShape& computation,
                    std::span<const ElementType> types, const char* what) {
  const size_t n = types.size();
  if (computation.parameters.size() != 2 * n) {
    return OpError(request, what, " computation takes ", computation.parameters.size(),
                   " parameters; expected ", 2 * n);
  }
  for (size_t i = 0; i < 2 * n; ++i) {
    const Shape& parameter = computation.parameters[i];
    const Shape expected = Shape::Scalar(types[i % n]);
    if (!parameter.Compatible(expected)) {
      return OpError(request, what, " computation parameter ", i, " has shape ", parameter.ToString(),
                     "; expected ", expected.ToString(), " (", what, " computations must be scalar)");
    }
  }
  std::vector<Shape> results;
  for (ElementType type : types) results.push_back(Shape::Scalar(type));
  const Shape expected = n == 1 ? results[0] : Shape::Tuple(results);
  if (!computation.result.Compatible(expected)) {
    return OpError(request, what, " computation returns ", computation.result.ToString(), "; expected ",
                   expected.ToString());
  }
  return OkStatus();
}

namespace {

constexpr int64_t kMaxElements = int64_t{1} << 60;

// Every shape that reaches inference must be well formed: known element type,
// non-negative dims, no overflowing element count, a valid layout.
Status ValidateShape(const Shape& shape, const char* role) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) KILN_RETURN_IF_ERROR(ValidateShape(element, role));
    return OkStatus();
  }
  if (shape.IsToken()) return OkStatus();
  if (!shape.IsArray()) return InvalidArgument(role, " has an invalid element type");
  int64_t count = 1;
  for (int64_t d : shape.dimensions()) {
    if (d < 0) return InvalidArgument(role, " ", shape.ToString(), " has a negative dimension");
    if (d > 0 && count > kMaxElements / d) {
      return InvalidArgument(role, " ", shape.ToString(), " has too many elements");
    }
    count *= d;
  }
  return ValidateLayout(shape);
}

}  // namespace
}  // namespace shape_inference_internal

StatusOr<Shape> InferShape(Opcode opcode, std::span<const Shape> operands, const Attributes& attrs,
                           std::span<const ProgramShape> called, const Shape* declared) {
  using namespace shape_inference_internal;
  if (static_cast<int>(opcode) < 0 || opcode >= Opcode::kOpcodeCount) {
    return InvalidArgument("unknown opcode ", static_cast<int>(opcode));
  }
  const OpRequest request{opcode, operands, attrs, called, declared};
  for (const Shape& operand : operands) {
    Status status = ValidateShape(operand, "operand");
    if (!status.ok()) return OpError(request, status.message());
  }
  if (declared != nullptr) {
    Status status = ValidateShape(*declared, "declared shape");
    if (!status.ok()) return OpError(request, status.message());
  }
  switch (opcode) {
    case Opcode::kDot:
    case Opcode::kConvolution: return InferContraction(request);
    case Opcode::kFft: return InferFft(request);
    case Opcode::kGather:
    case Opcode::kScatter: return InferGatherScatter(request);
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kSelectAndScatter:
    case Opcode::kSort:
    case Opcode::kTopK:
    case Opcode::kAllReduce:
    case Opcode::kMap:
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad: return InferReduction(request);
    case Opcode::kBroadcast:
    case Opcode::kReshape:
    case Opcode::kTranspose:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
    case Opcode::kPad:
    case Opcode::kSlice:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kIota:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kGetDimensionSize: return InferShapeManipulation(request);
    default: break;
  }
  if (IsElementwise(opcode) || opcode == Opcode::kBitcastConvert) return InferElementwise(request);
  return InferControlAndMisc(request);
}

}  // namespace kiln
