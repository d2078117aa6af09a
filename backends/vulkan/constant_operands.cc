#include "backends/vulkan/constant_operands.h"

namespace kiln::vulkan {
namespace {

// Deeper constant expressions are rare (the simplifier folds them): past
// this depth an operand counts as known at run time only.
constexpr int kMaxConstantDepth = 16;

// Whether `instruction`'s value is fixed at compile time: a constant, or an
// op a kernel computes per element (elementwise or a shape op) whose
// operands all are. An iota has no operands and varies with the element, so
// it is not; nor is anything random.
// `constant_parameters` (may be null) count as constants.
bool IsCompileTimeConstant(const Instruction& instruction, int depth,
                           const ConstantParameters* constant_parameters) {
  if (instruction.opcode == Opcode::kConstant) return true;
  if (instruction.opcode == Opcode::kParameter)
    return constant_parameters != nullptr && constant_parameters->contains(&instruction);
  if (depth >= kMaxConstantDepth || instruction.operands.empty() || !IsLoopFusible(instruction.opcode) ||
      HasTraits(instruction.opcode, kRandom))
    return false;
  for (const Instruction* operand : instruction.operands) {
    if (!IsCompileTimeConstant(*operand, depth + 1, constant_parameters)) return false;
  }
  return true;
}

// Whether a compile-time constant may hold a zero: false only where its
// elements are a constant's, moved but not computed (broadcast, reshape,
// slice, transpose, copy, reverse), and none of them is a zero (or the
// real part of a complex one: complex constants always count).
bool MayHoldZero(const Instruction& instruction) {
  const Instruction* source = &instruction;
  while (source->opcode == Opcode::kBroadcast || source->opcode == Opcode::kReshape ||
         source->opcode == Opcode::kSlice || source->opcode == Opcode::kTranspose ||
         source->opcode == Opcode::kCopy || source->opcode == Opcode::kReverse) {
    source = source->operand(0);
  }
  if (source->opcode != Opcode::kConstant || !source->literal.has_value()) return true;
  const Literal& literal = *source->literal;
  if (IsComplex(literal.shape().element_type())) return true;
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    if (literal.GetAsDouble(i) == 0.0) return true;
  }
  return false;
}

}  // namespace

int GuardedConstantOperand(const Instruction& instruction, const ConstantParameters* constant_parameters) {
  switch (instruction.opcode) {
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kDivide: break;
    default: return -1;
  }
  if (!instruction.shape.IsArray()) return -1;
  const ElementType type = instruction.shape.element_type();
  if (!IsFloating(type) && !IsComplex(type)) return -1;
  // Where both are constants the second is taken (the driver computes an
  // op of two folded constants itself, exactly).
  for (const int i : {1, 0}) {
    const Instruction& operand = *instruction.operand(static_cast<size_t>(i));
    // A constant parameter's value is not known here: it may be zero.
    if (IsCompileTimeConstant(operand, 0, constant_parameters) && MayHoldZero(operand)) return i;
  }
  return -1;
}

bool IsConstantThatMayHoldZero(const Instruction& instruction) {
  return instruction.shape.IsArray() && IsCompileTimeConstant(instruction, 0, nullptr) &&
         MayHoldZero(instruction);
}

}  // namespace kiln::vulkan
