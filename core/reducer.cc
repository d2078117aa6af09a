#include "core/reducer.h"

namespace kiln {

std::optional<Opcode> SimpleReducer(const Instruction& reduce) {
  if (reduce.operands.size() != 2 || reduce.called.size() != 1) return std::nullopt;
  const Instruction* root = reduce.called[0]->root();
  if (root == nullptr || root->operands.size() != 2) return std::nullopt;
  if (root->opcode != Opcode::kAdd && root->opcode != Opcode::kMaximum && root->opcode != Opcode::kMinimum) {
    return std::nullopt;
  }
  const Instruction* lhs = root->operand(0);
  const Instruction* rhs = root->operand(1);
  if (lhs->opcode != Opcode::kParameter || rhs->opcode != Opcode::kParameter || lhs == rhs)
    return std::nullopt;
  return root->opcode;
}

bool IsNarrowFloatSum(const Instruction& instruction) {
  if (instruction.opcode != Opcode::kReduce || !instruction.shape.IsArray()) return false;
  const ElementType type = instruction.shape.element_type();
  return (type == ElementType::kF16 || type == ElementType::kBF16) &&
         SimpleReducer(instruction) == Opcode::kAdd;
}

}  // namespace kiln
