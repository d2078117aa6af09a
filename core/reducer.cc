#include "core/reducer.h"

namespace kiln {

std::optional<Opcode> BinaryCombinerOpcode(const Computation& combiner) {
  const Instruction* root = combiner.root();
  if (combiner.parameters().size() != 2 || root == nullptr || root->operands.size() != 2) return std::nullopt;
  const Instruction* lhs = root->operand(0);
  const Instruction* rhs = root->operand(1);
  if (lhs->opcode != Opcode::kParameter || rhs->opcode != Opcode::kParameter || lhs == rhs)
    return std::nullopt;
  return root->opcode;
}

std::optional<Opcode> SimpleReducer(const Instruction& reduce) {
  if (reduce.operands.size() != 2 || reduce.called.size() != 1) return std::nullopt;
  const std::optional<Opcode> opcode = BinaryCombinerOpcode(*reduce.called[0]);
  if (opcode != Opcode::kAdd && opcode != Opcode::kMaximum && opcode != Opcode::kMinimum) return std::nullopt;
  return opcode;
}

bool IsNarrowFloatSum(const Instruction& instruction) {
  if (instruction.opcode != Opcode::kReduce || !instruction.shape.IsArray()) return false;
  const ElementType type = instruction.shape.element_type();
  return (type == ElementType::kF16 || type == ElementType::kBF16) &&
         SimpleReducer(instruction) == Opcode::kAdd;
}

}  // namespace kiln
