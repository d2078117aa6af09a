#include "core/ir_edit.h"

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/work_count.h"

namespace kiln {

UserMap ComputeUsers(const Computation& computation) {
  CountInstructionsWalked(computation.instructions().size());
  UserMap users;
  users.reserve(computation.instructions().size());
  for (const auto& instruction : computation.instructions()) {
    users.try_emplace(instruction.get());
    for (const Instruction* operand : instruction->operands) {
      std::vector<Instruction*>& list = users[operand];
      if (list.empty() || list.back() != instruction.get()) list.push_back(instruction.get());
    }
  }
  return users;
}

void UseReplacer::Replace(const Instruction* old, Instruction* replacement) {
  if (old != replacement) replacements_[old] = replacement;
}

Instruction* UseReplacer::Resolve(Instruction* value, const Instruction* user) const {
  // Chains are short: a replacement is made from operands already forwarded.
  for (auto found = replacements_.find(value); found != replacements_.end() && found->second != user;
       found = replacements_.find(value)) {
    value = found->second;
  }
  return value;
}

void UseReplacer::Forward(Instruction& instruction) const {
  if (replacements_.empty()) return;
  for (Instruction*& operand : instruction.operands) operand = Resolve(operand, &instruction);
}

bool UseReplacer::Apply() {
  if (replacements_.empty()) return false;
  CountInstructionsWalked(computation_.instructions().size());
  for (const auto& instruction : computation_.instructions()) Forward(*instruction);
  if (computation_.root() != nullptr) computation_.set_root(Resolve(computation_.root()));
  return true;
}

void NameUniquer::Grow(size_t names) {
  size_t capacity = 64;
  while (capacity < 2 * names) capacity *= 2;
  if (capacity <= used_.size()) return;
  std::vector<std::string> old = std::move(used_);
  used_.assign(capacity, std::string());
  const size_t mask = used_.size() - 1;
  for (std::string& name : old) {
    if (name.empty()) continue;
    size_t slot = std::hash<std::string>()(name) & mask;
    while (!used_[slot].empty()) slot = (slot + 1) & mask;
    used_[slot] = std::move(name);
  }
}

bool NameUniquer::Use(const std::string& name) {
  if (2 * (used_count_ + 1) > used_.size()) Grow(used_count_ + 1);
  const size_t mask = used_.size() - 1;  // the size is a power of two
  size_t slot = std::hash<std::string>()(name) & mask;
  for (; !used_[slot].empty(); slot = (slot + 1) & mask) {
    if (used_[slot] == name) return false;
  }
  used_[slot] = name;
  ++used_count_;
  return true;
}

std::string NameUniquer::Make(const std::string& base) {
  if (computation_ != nullptr) {
    CountInstructionsWalked(computation_->instructions().size());
    Grow(computation_->instructions().size());
    for (const auto& instruction : computation_->instructions()) {
      if (!instruction->name.empty()) Use(instruction->name);
    }
    computation_ = nullptr;
  }
  const std::string stem = base.empty() ? std::string("t") : base;
  if (Use(stem)) return stem;
  for (int& suffix = next_suffix_.try_emplace(stem, 1).first->second;;) {
    std::string candidate = stem + "." + std::to_string(suffix++);
    if (Use(candidate)) return candidate;
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
