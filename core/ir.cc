#include "core/ir.h"

#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/hlo_printer.h"
#include "core/pointer_map.h"
#include "core/post_order.h"
#include "core/work_count.h"

namespace kiln {

std::string Instruction::ToString() const { return PrintInstruction(*this); }

void Computation::set_name(std::string name) {
  std::string old_name = std::exchange(name_, std::move(name));
  if (module_ != nullptr) module_->Renamed(this, old_name);
}

Instruction* Computation::AddInstruction(std::unique_ptr<Instruction> instruction) {
  Instruction* raw = instruction.get();
  instructions_.push_back(std::move(instruction));
  // Out-of-range numbers are left out of the table; the verifier reports them.
  constexpr int64_t kMaxParameters = int64_t{1} << 20;
  if (raw->opcode == Opcode::kParameter && raw->attrs.parameter_number >= 0 &&
      raw->attrs.parameter_number < kMaxParameters) {
    const auto number = static_cast<size_t>(raw->attrs.parameter_number);
    if (parameters_.size() <= number) parameters_.resize(number + 1, nullptr);
    parameters_[number] = raw;
  }
  return raw;
}

ProgramShape Computation::program_shape() const {
  ProgramShape shape;
  for (const Instruction* parameter : parameters_) {
    shape.parameters.push_back(parameter ? parameter->shape : Shape());
    shape.parameter_names.push_back(parameter ? parameter->name : "");
  }
  if (root_) shape.result = root_->shape;
  return shape;
}

void AppendPostOrder(Instruction* start, PointerSet& visited, std::vector<Instruction*>& order) {
  if (!visited.Insert(start)) return;
  std::vector<std::pair<Instruction*, size_t>> stack = {{start, 0}};
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->operands.size()) {
      Instruction* operand = node->operands[next++];
      if (visited.Insert(operand)) stack.emplace_back(operand, 0);
      continue;
    }
    order.push_back(node);
    stack.pop_back();
  }
}

std::vector<Instruction*> Computation::PostOrder() const {
  std::vector<Instruction*> order;
  if (!root_) return order;
  PointerSet visited(instructions_.size());
  order.reserve(instructions_.size());
  AppendPostOrder(root_, visited, order);
  CountInstructionsWalked(order.size());
  return order;
}

bool HasSideEffect(const Instruction& instruction) {
  if (instruction.opcode == Opcode::kCustomCall) return instruction.attrs.custom_call_has_side_effect;
  return HasTraits(instruction.opcode, kSideEffect);
}

namespace {

// The instructions the root or a side effect reaches, in one walk of the
// computation: each instruction is looked at once, its operands once each.
PointerSet MarkLive(const std::vector<std::unique_ptr<Instruction>>& instructions, const Instruction* root) {
  CountInstructionsWalked(instructions.size());
  PointerSet live(instructions.size());
  std::vector<const Instruction*> stack;
  if (root != nullptr) stack.push_back(root);
  for (const auto& instruction : instructions) {
    if (HasSideEffect(*instruction)) stack.push_back(instruction.get());
  }
  while (!stack.empty()) {
    const Instruction* instruction = stack.back();
    stack.pop_back();
    if (!live.Insert(instruction)) continue;
    for (const Instruction* operand : instruction->operands) stack.push_back(operand);
  }
  return live;
}

}  // namespace

std::vector<const Instruction*> Computation::LiveInstructions() const {
  const PointerSet live = MarkLive(instructions_, root_);
  std::vector<const Instruction*> order;
  order.reserve(live.size());
  for (const auto& instruction : instructions_) {
    if (live.Contains(instruction.get())) order.push_back(instruction.get());
  }
  return order;
}

bool Computation::RemoveDeadInstructions() {
  // One marking walk (it used to take a post-order of the root first, then
  // walk again from the side effects: two walks and two hash sets).
  const PointerSet live = MarkLive(instructions_, root_);
  const size_t before = instructions_.size();
  std::erase_if(instructions_, [&](const std::unique_ptr<Instruction>& instruction) {
    return instruction->opcode != Opcode::kParameter && !live.Contains(instruction.get());
  });
  return instructions_.size() != before;
}

void Computation::SortTopologically() {
  CountInstructionsWalked(instructions_.size());
  PointerMap<size_t> position(instructions_.size());
  for (size_t i = 0; i < instructions_.size(); ++i) position.Insert(instructions_[i].get(), i);
  std::vector<char> placed(instructions_.size(), 0);
  std::vector<size_t> order;
  order.reserve(instructions_.size());
  // Iterative DFS from each instruction in its current order: operands are
  // placed first, so an already valid order is left unchanged.
  for (size_t start = 0; start < instructions_.size(); ++start) {
    if (placed[start]) continue;
    std::vector<std::pair<size_t, size_t>> stack = {{start, 0}};
    placed[start] = 1;
    while (!stack.empty()) {
      auto& [index, next] = stack.back();
      const Instruction* node = instructions_[index].get();
      if (next < node->operands.size()) {
        const size_t* found = position.Find(node->operands[next++]);
        if (found != nullptr && !placed[*found]) {
          placed[*found] = 1;
          stack.emplace_back(*found, 0);
        }
        continue;
      }
      order.push_back(index);
      stack.pop_back();
    }
  }
  std::vector<std::unique_ptr<Instruction>> sorted;
  sorted.reserve(instructions_.size());
  for (size_t index : order) sorted.push_back(std::move(instructions_[index]));
  instructions_ = std::move(sorted);
}

std::vector<Instruction*> Computation::Users(const Instruction* instruction) const {
  CountInstructionsWalked(instructions_.size());
  std::vector<Instruction*> users;
  for (const auto& candidate : instructions_) {
    for (const Instruction* operand : candidate->operands) {
      if (operand == instruction) {
        users.push_back(candidate.get());
        break;
      }
    }
  }
  return users;
}

void Computation::ReplaceAllUsesWith(const Instruction* old, Instruction* replacement) {
  CountInstructionsWalked(instructions_.size());
  for (const auto& instruction : instructions_) {
    if (instruction.get() == replacement) continue;  // never make an instruction its own operand
    for (Instruction*& operand : instruction->operands) {
      if (operand == old) operand = replacement;
    }
  }
  if (root_ == old) root_ = replacement;
}

Status Computation::RemoveInstruction(const Instruction* instruction) {
  if (instruction == root_) return FailedPrecondition("cannot remove root ", instruction->name);
  if (instruction->opcode == Opcode::kParameter) {
    return FailedPrecondition("cannot remove parameter ", instruction->name);
  }
  if (!Users(instruction).empty()) {
    return FailedPrecondition("cannot remove ", instruction->name, ": it still has users");
  }
  const size_t before = instructions_.size();
  std::erase_if(instructions_, [&](const std::unique_ptr<Instruction>& candidate) {
    return candidate.get() == instruction;
  });
  if (instructions_.size() == before) {
    return NotFound("instruction ", instruction->name, " is not in computation ", name_);
  }
  return OkStatus();
}

std::vector<std::unique_ptr<Instruction>> Computation::ReleaseInstructions() {
  parameters_.clear();
  root_ = nullptr;
  return std::exchange(instructions_, {});
}

std::string Module::UniqueComputationName(const std::string& base) {
  if (!FindComputation(base)) return base;
  for (int& suffix = next_suffix_.try_emplace(base, 1).first->second;;) {
    std::string candidate = base + "." + std::to_string(suffix++);
    if (!FindComputation(candidate)) return candidate;
  }
}

Computation* Module::AddComputation(std::unique_ptr<Computation> computation) {
  computation->set_name(UniqueComputationName(computation->name()));
  computation->module_ = this;
  by_name_.emplace(computation->name(), computation.get());
  computations_.push_back(std::move(computation));
  return computations_.back().get();
}

Computation* Module::FindComputation(const std::string& name) const {
  CountInstructionsWalked(1);
  const auto found = by_name_.find(name);
  return found == by_name_.end() ? nullptr : found->second;
}

void Module::Renamed(Computation* computation, const std::string& old_name) {
  auto [first, last] = by_name_.equal_range(old_name);
  for (auto it = first; it != last; ++it) {
    if (it->second == computation) {
      by_name_.erase(it);
      break;
    }
  }
  by_name_.emplace(computation->name(), computation);
}

namespace {

// Copies `source` into a new computation, mapping called computations through
// `callee_map` (which must already contain every callee).
std::unique_ptr<Computation> CopyComputation(
    const Computation& source, const std::unordered_map<const Computation*, Computation*>& callee_map) {
  auto copy = std::make_unique<Computation>(source.name());
  PointerMap<Instruction*> map(source.instructions().size());
  // An operand outside `source` (an invalid module) has no copy: the clone
  // reads null, as a failed lookup here must not throw.
  const auto copy_of = [&map](const Instruction* original) {
    Instruction* const* found = map.Find(original);
    return found != nullptr ? *found : nullptr;
  };
  for (const auto& instruction : source.instructions()) {
    auto clone = std::make_unique<Instruction>(*instruction);
    for (Instruction*& operand : clone->operands) operand = copy_of(operand);
    for (Computation*& callee : clone->called) callee = callee_map.at(callee);
    map.Insert(instruction.get(), copy->AddInstruction(std::move(clone)));
  }
  if (source.root()) copy->set_root(copy_of(source.root()));
  return copy;
}

void CollectCalleesPostOrder(const Computation* computation, std::set<const Computation*>& visited,
                             std::vector<const Computation*>& order) {
  if (!visited.insert(computation).second) return;
  for (const auto& instruction : computation->instructions()) {
    for (const Computation* callee : instruction->called) CollectCalleesPostOrder(callee, visited, order);
  }
  order.push_back(computation);
}

}  // namespace

std::vector<Computation*> Module::ComputationsPostOrder() const {
  std::set<const Computation*> visited;
  std::vector<const Computation*> order;
  if (entry_) CollectCalleesPostOrder(entry_, visited, order);
  for (const auto& computation : computations_) CollectCalleesPostOrder(computation.get(), visited, order);
  // Keep the entry last even when unreachable computations follow it.
  std::vector<Computation*> result;
  for (const Computation* c : order) {
    if (c != entry_) result.push_back(const_cast<Computation*>(c));
  }
  if (entry_) result.push_back(entry_);
  return result;
}

bool Module::RemoveUnreachableComputations() {
  if (!entry_) return false;
  std::set<const Computation*> reachable;
  std::vector<const Computation*> order;
  CollectCalleesPostOrder(entry_, reachable, order);
  const size_t before = computations_.size();
  std::erase_if(computations_, [&](const std::unique_ptr<Computation>& computation) {
    return !reachable.count(computation.get());
  });
  if (computations_.size() == before) return false;
  std::erase_if(by_name_, [&](const auto& entry) { return !reachable.count(entry.second); });
  return true;
}

Computation* Module::ImportComputation(const Computation& computation) {
  std::set<const Computation*> visited;
  std::vector<const Computation*> order;
  CollectCalleesPostOrder(&computation, visited, order);
  std::unordered_map<const Computation*, Computation*> map;
  for (const Computation* source : order) {
    map[source] = AddComputation(CopyComputation(*source, map));
  }
  return map.at(&computation);
}

std::unique_ptr<Module> Module::Clone() const {
  auto copy = std::make_unique<Module>(name_);
  std::unordered_map<const Computation*, Computation*> map;
  for (Computation* source : ComputationsPostOrder()) {
    auto computation = CopyComputation(*source, map);
    map[source] = copy->AddComputation(std::move(computation));
  }
  if (entry_) copy->set_entry(map.at(entry_));
  copy->set_entry_layout(entry_layout_);
  return copy;
}

std::string Module::ToString() const { return PrintModule(*this); }

}  // namespace kiln
