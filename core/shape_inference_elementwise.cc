// Shape inference of elementwise ops: unary, binary, compare, select, clamp,
// the type-changing ops (convert, bitcast-convert, complex, real, imag,
// is-finite, reduce-precision).
#include "core/shape_inference_internal.h"

namespace kiln::shape_inference_internal {
namespace {

bool IsNumeric(ElementType type) { return IsIntegral(type) || IsFloating(type) || IsComplex(type); }
bool IsFloatOrComplex(ElementType type) { return IsFloating(type) || IsComplex(type); }
bool IsPredOrIntegral(ElementType type) { return type == ElementType::kPred || IsIntegral(type); }

// Which element types a unary/binary op accepts, and how to say so.
struct TypeRule {
  bool (*accepts)(ElementType);
  const char* expected;
};

TypeRule UnaryTypeRule(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAbs:
    case Opcode::kSign:
      return {[](ElementType t) { return IsSignedIntegral(t) || IsFloatOrComplex(t); },
              "a signed integer, floating-point or complex type"};
    case Opcode::kNegate: return {IsNumeric, "a numeric (non-pred) type"};
    case Opcode::kNot: return {IsPredOrIntegral, "pred or an integer type"};
    case Opcode::kClz:
    case Opcode::kPopcnt: return {IsIntegral, "an integer type"};
    case Opcode::kFloor:
    case Opcode::kCeil:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kErf: return {IsFloating, "a floating-point type"};
    case Opcode::kCopy: return {[](ElementType) { return true; }, "any type"};
    default: return {IsFloatOrComplex, "a floating-point or complex type"};
  }
}

TypeRule BinaryTypeRule(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor: return {IsPredOrIntegral, "pred or an integer type"};
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical: return {IsIntegral, "an integer type"};
    case Opcode::kMaximum:
    case Opcode::kMinimum:
      return {[](ElementType t) { return IsArrayType(t) && !IsComplex(t); }, "a non-complex type"};
    case Opcode::kRemainder:
      return {[](ElementType t) { return IsIntegral(t) || IsFloating(t); },
              "an integer or floating-point type"};
    case Opcode::kAtan2: return {IsFloatOrComplex, "a floating-point or complex type"};
    default: return {IsNumeric, "a numeric (non-pred) type"};
  }
}

Status ExpectSameShapes(const OpRequest& request, const Shape& lhs, const Shape& rhs) {
  if (lhs.dimensions() != rhs.dimensions()) {
    return OpError(request, "shapes ", lhs.ToString(), " and ", rhs.ToString(),
                   " are not compatible; expected equal shapes (use broadcast_dimensions)");
  }
  if (lhs.element_type() != rhs.element_type()) {
    return OpError(request, "element types of ", lhs.ToString(), " and ", rhs.ToString(),
                   " differ; expected equal element types (use convert)");
  }
  return OkStatus();
}

StatusOr<Shape> InferUnary(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 1));
  const Shape& operand = request.operands[0];
  if (request.opcode == Opcode::kCopy) return operand;
  KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
  const TypeRule rule = UnaryTypeRule(request.opcode);
  if (!rule.accepts(operand.element_type())) {
    return OpError(request, "operand ", operand.ToString(), " has element type ",
                   ElementTypeName(operand.element_type()), "; expected ", rule.expected);
  }
  Shape result(operand.element_type(), operand.dimensions());
  if (request.opcode == Opcode::kAbs) result.set_element_type(ComplexComponentType(operand.element_type()));
  return result;
}

StatusOr<Shape> InferBinary(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 2));
  const Shape& lhs = request.operands[0];
  const Shape& rhs = request.operands[1];
  KILN_RETURN_IF_ERROR(ExpectArray(request, lhs, "lhs"));
  KILN_RETURN_IF_ERROR(ExpectArray(request, rhs, "rhs"));
  KILN_RETURN_IF_ERROR(ExpectSameShapes(request, lhs, rhs));
  const TypeRule rule = BinaryTypeRule(request.opcode);
  if (!rule.accepts(lhs.element_type())) {
    return OpError(request, "operands ", lhs.ToString(), " and ", rhs.ToString(), " have element type ",
                   ElementTypeName(lhs.element_type()), "; expected ", rule.expected);
  }
  return Shape(lhs.element_type(), lhs.dimensions());
}

StatusOr<Shape> InferComplex(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 2));
  const Shape& real = request.operands[0];
  const Shape& imag = request.operands[1];
  KILN_RETURN_IF_ERROR(ExpectArray(request, real, "real part"));
  KILN_RETURN_IF_ERROR(ExpectArray(request, imag, "imaginary part"));
  KILN_RETURN_IF_ERROR(ExpectSameShapes(request, real, imag));
  if (real.element_type() == ElementType::kF32) return Shape(ElementType::kC64, real.dimensions());
  if (real.element_type() == ElementType::kF64) return Shape(ElementType::kC128, real.dimensions());
  return OpError(request, "operands ", real.ToString(), " and ", imag.ToString(), " must be f32 or f64");
}

StatusOr<Shape> InferRealImag(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 1));
  const Shape& operand = request.operands[0];
  KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
  if (!IsFloatOrComplex(operand.element_type())) {
    return OpError(request, "operand ", operand.ToString(), " must be complex or floating-point");
  }
  return Shape(ComplexComponentType(operand.element_type()), operand.dimensions());
}

StatusOr<Shape> InferIsFinite(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 1));
  const Shape& operand = request.operands[0];
  KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
  if (!IsFloating(operand.element_type())) {
    return OpError(request, "operand ", operand.ToString(), " must be floating-point");
  }
  return Shape(ElementType::kPred, operand.dimensions());
}

Status CheckComparisonType(const OpRequest& request, const Shape& lhs) {
  const ElementType type = lhs.element_type();
  const ComparisonDirection direction = request.attrs.comparison_direction;
  if (IsComplex(type) && direction != ComparisonDirection::kEq && direction != ComparisonDirection::kNe) {
    return OpError(request, "complex operands ", lhs.ToString(), " support only EQ and NE directions");
  }
  switch (request.attrs.comparison_type) {
    case ComparisonType::kDefault: return OkStatus();
    case ComparisonType::kFloat:
      if (IsFloatOrComplex(type)) return OkStatus();
      return OpError(request, "comparison type FLOAT needs floating-point operands, got ", lhs.ToString());
    case ComparisonType::kTotalOrder:
      if (IsFloating(type)) return OkStatus();
      return OpError(request, "comparison type TOTALORDER needs floating-point operands, got ",
                     lhs.ToString());
    case ComparisonType::kSigned:
      if (IsSignedIntegral(type)) return OkStatus();
      return OpError(request, "comparison type SIGNED needs signed integer operands, got ", lhs.ToString());
    case ComparisonType::kUnsigned:
      if (IsUnsignedIntegral(type) || type == ElementType::kPred) return OkStatus();
      return OpError(request, "comparison type UNSIGNED needs unsigned or pred operands, got ",
                     lhs.ToString());
  }
  return OpError(request, "unknown comparison type");
}

StatusOr<Shape> InferCompare(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 2));
  const Shape& lhs = request.operands[0];
  const Shape& rhs = request.operands[1];
  KILN_RETURN_IF_ERROR(ExpectArray(request, lhs, "lhs"));
  KILN_RETURN_IF_ERROR(ExpectArray(request, rhs, "rhs"));
  KILN_RETURN_IF_ERROR(ExpectSameShapes(request, lhs, rhs));
  KILN_RETURN_IF_ERROR(CheckComparisonType(request, lhs));
  return Shape(ElementType::kPred, lhs.dimensions());
}

StatusOr<Shape> InferSelect(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 3));
  const Shape& pred = request.operands[0];
  const Shape& on_true = request.operands[1];
  const Shape& on_false = request.operands[2];
  KILN_RETURN_IF_ERROR(ExpectArray(request, pred, "predicate"));
  // The seed's tuple form: a scalar predicate picks one of two equal tuples.
  if (on_true.IsTuple() || on_false.IsTuple()) {
    if (!pred.IsScalar() || pred.element_type() != ElementType::kPred) {
      return OpError(request, "selecting between tuples needs a scalar pred predicate, got ",
                     pred.ToString());
    }
    if (!on_true.Compatible(on_false)) {
      return OpError(request, "on_true ", on_true.ToString(), " and on_false ", on_false.ToString(),
                     " must have the same shape");
    }
    return on_true;
  }
  KILN_RETURN_IF_ERROR(ExpectArray(request, on_true, "on_true"));
  KILN_RETURN_IF_ERROR(ExpectArray(request, on_false, "on_false"));
  if (pred.element_type() != ElementType::kPred) {
    return OpError(request, "predicate ", pred.ToString(), " must have element type pred");
  }
  KILN_RETURN_IF_ERROR(ExpectSameShapes(request, on_true, on_false));
  if (!pred.IsScalar() && pred.dimensions() != on_true.dimensions()) {
    return OpError(request, "predicate ", pred.ToString(), " must be a scalar or have the dimensions of ",
                   on_true.ToString());
  }
  return Shape(on_true.element_type(), on_true.dimensions());
}

StatusOr<Shape> InferClamp(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 3));
  const Shape& min = request.operands[0];
  const Shape& operand = request.operands[1];
  const Shape& max = request.operands[2];
  KILN_RETURN_IF_ERROR(ExpectArray(request, min, "min"));
  KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
  KILN_RETURN_IF_ERROR(ExpectArray(request, max, "max"));
  for (const Shape* bound : {&min, &max}) {
    if (bound->element_type() != operand.element_type()) {
      return OpError(request, "bound ", bound->ToString(), " and operand ", operand.ToString(),
                     " have different element types");
    }
    if (!bound->IsScalar() && bound->dimensions() != operand.dimensions()) {
      return OpError(request, "bound ", bound->ToString(), " must be a scalar or have the shape of operand ",
                     operand.ToString());
    }
  }
  if (IsComplex(operand.element_type())) {
    return OpError(request, "complex operand ", operand.ToString(), " has no order to clamp by");
  }
  return Shape(operand.element_type(), operand.dimensions());
}

StatusOr<Shape> InferConvert(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 1));
  const Shape& operand = request.operands[0];
  KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
  KILN_ASSIGN_OR_RETURN(Shape declared, RequireDeclared(request));
  KILN_RETURN_IF_ERROR(ExpectArray(request, declared, "result"));
  if (declared.dimensions() != operand.dimensions()) {
    return OpError(request, "result ", declared.ToString(), " must have the dimensions of operand ",
                   operand.ToString());
  }
  if (IsComplex(operand.element_type()) && !IsComplex(declared.element_type())) {
    return OpError(request, "conversion from complex ", operand.ToString(), " to ", declared.ToString(),
                   " is not defined; use real or imag");
  }
  return declared;
}

StatusOr<Shape> InferBitcastConvert(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 1));
  const Shape& operand = request.operands[0];
  KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
  KILN_ASSIGN_OR_RETURN(Shape declared, RequireDeclared(request));
  KILN_RETURN_IF_ERROR(ExpectArray(request, declared, "result"));
  const int in_bits = BitWidth(operand.element_type());
  const int out_bits = BitWidth(declared.element_type());
  if (operand.element_type() == ElementType::kPred || declared.element_type() == ElementType::kPred) {
    return OpError(request, "pred has no defined bit pattern (operand ", operand.ToString(), ", result ",
                   declared.ToString(), ")");
  }
  std::vector<int64_t> expected = operand.dimensions();
  if (out_bits < in_bits) {
    expected.push_back(in_bits / out_bits);
  } else if (out_bits > in_bits) {
    if (expected.empty() || expected.back() != out_bits / in_bits) {
      return OpError(request, "converting ", operand.ToString(), " to the wider ",
                     ElementTypeName(declared.element_type()), " needs a minor dimension of size ",
                     out_bits / in_bits);
    }
    expected.pop_back();
  }
  if (declared.dimensions() != expected) {
    return OpError(request, "result ", declared.ToString(), " does not match operand ", operand.ToString(),
                   "; expected dimensions ", DimsToString(expected));
  }
  return declared;
}

StatusOr<Shape> InferReducePrecision(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 1));
  const Shape& operand = request.operands[0];
  KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
  if (!IsFloating(operand.element_type())) {
    return OpError(request, "operand ", operand.ToString(), " must be floating-point");
  }
  if (request.attrs.exponent_bits < 1 || request.attrs.mantissa_bits < 0) {
    return OpError(request, "exponent_bits=", request.attrs.exponent_bits,
                   " mantissa_bits=", request.attrs.mantissa_bits,
                   "; expected exponent_bits >= 1 and mantissa_bits >= 0");
  }
  return Shape(operand.element_type(), operand.dimensions());
}

}  // namespace

StatusOr<Shape> InferElementwise(const OpRequest& request) {
  switch (request.opcode) {
    case Opcode::kCompare: return InferCompare(request);
    case Opcode::kSelect: return InferSelect(request);
    case Opcode::kClamp: return InferClamp(request);
    case Opcode::kConvert: return InferConvert(request);
    case Opcode::kBitcastConvert: return InferBitcastConvert(request);
    case Opcode::kComplex: return InferComplex(request);
    case Opcode::kReal:
    case Opcode::kImag: return InferRealImag(request);
    case Opcode::kIsFinite: return InferIsFinite(request);
    case Opcode::kReducePrecision: return InferReducePrecision(request);
    default: break;
  }
  if (OpcodeKind(request.opcode) == OpKind::kUnary) return InferUnary(request);
  if (OpcodeKind(request.opcode) == OpKind::kBinary) return InferBinary(request);
  return OpError(request, "is not an elementwise op");
}

}  // namespace kiln::shape_inference_internal
