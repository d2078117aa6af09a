#include "core/ir_edit.h"

namespace kiln {

UserMap ComputeUsers(const Computation& computation) {
  UserMap users;
  for (const auto& instruction : computation.instructions()) {
    users.try_emplace(instruction.get());
    for (const Instruction* operand : instruction->operands) {
      std::vector<Instruction*>& list = users[operand];
      if (list.empty() || list.back() != instruction.get()) list.push_back(instruction.get());
    }
  }
  return users;
}

NameUniquer::NameUniquer(const Computation& computation) {
  for (const auto& instruction : computation.instructions()) used_.insert(instruction->name);
}

std::string NameUniquer::Make(const std::string& base) {
  const std::string stem = base.empty() ? std::string("t") : base;
  if (used_.insert(stem).second) return stem;
  for (int suffix = 1;; ++suffix) {
    std::string candidate = stem + "." + std::to_string(suffix);
    if (used_.insert(candidate).second) return candidate;
  }
}

std::unique_ptr<Instruction> MakeInstruction(Opcode opcode, Shape shape, std::vector<Instruction*> operands,
                                             Attributes attrs) {
  auto instruction = std::make_unique<Instruction>();
  instruction->opcode = opcode;
  instruction->shape = std::move(shape);
  instruction->operands = std::move(operands);
  instruction->attrs = std::move(attrs);
  return instruction;
}

Instruction* CloneInstructionInto(const Instruction& source, Computation& target,
                                  std::vector<Instruction*> operands, std::string name) {
  auto clone = std::make_unique<Instruction>(source);
  clone->operands = std::move(operands);
  clone->name = std::move(name);
  return target.AddInstruction(std::move(clone));
}

Instruction* AddNamedInstruction(Computation& computation, NameUniquer& names,
                                 std::unique_ptr<Instruction> instruction, const std::string& base) {
  instruction->name = names.Make(base);
  return computation.AddInstruction(std::move(instruction));
}

}  // namespace kiln
