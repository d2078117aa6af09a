#include "backends/cpu/codegen/emittable.h"

#include "backends/cpu/codegen/scalar_ops_ir.h"

namespace kiln::cpu::codegen {
namespace {

bool IsRealArray(const Shape& shape) { return shape.IsArray() && !IsComplex(shape.element_type()); }

Status Refuse(const Instruction& instruction, const char* why) {
  return Unimplemented("cpu codegen: cannot emit ", OpcodeName(instruction.opcode), " ",
                       instruction.shape.ToString(), " (", instruction.name, "): ", why);
}

bool AllLeavesReal(const Shape& shape) {
  for (const Shape& leaf : shape.Leaves()) {
    if (!IsRealArray(leaf)) return false;
  }
  return !shape.Leaves().empty();
}

Status CheckComputation(const Computation& computation, bool scalar_only);

Status CheckInstruction(const Instruction& instruction, bool scalar_only) {
  const Opcode opcode = instruction.opcode;
  for (const Instruction* operand : instruction.operands) {
    if (!AllLeavesReal(operand->shape)) return Refuse(instruction, "operands must be real arrays");
  }
  if (!AllLeavesReal(instruction.shape)) return Refuse(instruction, "only real (non-complex) arrays are supported");
  if (instruction.shape.IsTuple() && opcode != Opcode::kTuple && opcode != Opcode::kReduce &&
      opcode != Opcode::kReduceWindow) {
    return Refuse(instruction, "tuple-shaped results only come from tuple, reduce and reduce-window");
  }
  if (scalar_only && instruction.shape.IsArray() && instruction.shape.element_count() != 1) {
    return Refuse(instruction, "called computations must be scalar");
  }
  const ElementType type = instruction.shape.IsArray() ? instruction.shape.element_type() : ElementType::kInvalid;
  switch (opcode) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kIota:
    case Opcode::kCompare:
    case Opcode::kConvert:
    case Opcode::kSelect:
    case Opcode::kClamp:
    case Opcode::kBroadcast:
    case Opcode::kReshape:
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
    case Opcode::kPad:
    case Opcode::kDynamicSlice:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement: return OkStatus();
    case Opcode::kBitcastConvert:
      if (ByteWidth(type) != ByteWidth(instruction.operand(0)->shape.element_type())) {
        return Refuse(instruction, "only same-width bitcast-convert is supported");
      }
      return OkStatus();
    case Opcode::kIsFinite:
    case Opcode::kReducePrecision:
      if (!IsFloating(instruction.operand(0)->shape.element_type())) return Refuse(instruction, "needs a float operand");
      if (opcode == Opcode::kReducePrecision &&
          (instruction.attrs.exponent_bits < 1 || instruction.attrs.mantissa_bits < 0)) {
        return Refuse(instruction, "bad exponent or mantissa bits");
      }
      return OkStatus();
    case Opcode::kMap:
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
      if (instruction.called.size() != 1) return Refuse(instruction, "needs one computation");
      return CheckComputation(*instruction.called[0], /*scalar_only=*/true);
    default: break;
  }
  const OpKind kind = OpcodeKind(opcode);
  if (kind == OpKind::kUnary && UnaryOpSupported(opcode, instruction.operand(0)->shape.element_type())) return OkStatus();
  if (kind == OpKind::kBinary && BinaryOpSupported(opcode, type)) return OkStatus();
  return Unimplemented("cpu codegen: cannot emit ", OpcodeName(opcode), " for element type ",
                       type == ElementType::kInvalid ? "tuple" : ElementTypeName(type), " (", instruction.name, ")");
}

Status CheckComputation(const Computation& computation, bool scalar_only) {
  if (computation.root() == nullptr) return InvalidArgument("cpu codegen: ", computation.name(), " has no root");
  for (const Instruction* instruction : computation.PostOrder()) {
    KILN_RETURN_IF_ERROR(CheckInstruction(*instruction, scalar_only));
  }
  return OkStatus();
}

}  // namespace

Status CheckEmittable(const Computation& computation) {
  KILN_RETURN_IF_ERROR(CheckComputation(computation, /*scalar_only=*/false));
  for (const Instruction* parameter : computation.parameters()) {
    if (!parameter->shape.IsArray()) {
      return Unimplemented("cpu codegen: parameter ", parameter->name, " of ", computation.name(),
                           " must be an array, got ", parameter->shape.ToString());
    }
  }
  // All outputs are written by one loop nest, so they must share dimensions.
  const std::vector<Shape> leaves = computation.root()->shape.Leaves();
  for (const Shape& leaf : leaves) {
    if (leaf.dimensions() != leaves[0].dimensions()) {
      return Unimplemented("cpu codegen: outputs of ", computation.name(), " differ in dimensions: ",
                           computation.root()->shape.ToString());
    }
  }
  return OkStatus();
}

}  // namespace kiln::cpu::codegen
