#include "core/autodiff/rule_helpers.h"

namespace kiln::autodiff {

std::vector<int64_t> AllDimensions(const Shape& shape) {
  std::vector<int64_t> all;
  for (int64_t d = 0; d < shape.rank(); ++d) all.push_back(d);
  return all;
}

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

}  // namespace kiln::autodiff
