#include "core/passes/device_op_expansion.h"

#include <string>
#include <utility>

#include "core/ir_edit.h"
#include "core/passes/call_inliner.h"

namespace kiln {

const DeviceOpExpansion* FindDeviceOpExpansion(const Instruction& instruction) {
  for (const DeviceOpExpansion& row : DeviceOpExpansions()) {
    if (row.matches(instruction)) return &row;
  }
  return nullptr;
}

bool ExpandsForDevices(const Instruction& instruction) {
  const DeviceOpExpansion* row = FindDeviceOpExpansion(instruction);
  return row != nullptr && row->expand(instruction).ok();
}

StatusOr<bool> DeviceOpExpander::Run(Module& module) {
  // Collected first: expanding adds computations to the module.
  std::vector<std::pair<Computation*, Instruction*>> found;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (FindDeviceOpExpansion(*instruction) != nullptr)
        found.emplace_back(computation.get(), instruction.get());
    }
  }
  bool changed = false;
  for (auto [computation, instruction] : found) {
    StatusOr<std::unique_ptr<Module>> expansion = FindDeviceOpExpansion(*instruction)->expand(*instruction);
    if (!expansion.ok()) continue;  // refused later by name
    Computation* callee = module.ImportComputation(*(*expansion)->entry());
    std::unique_ptr<Instruction> call =
        MakeInstruction(Opcode::kCall, instruction->shape, instruction->operands);
    call->called = {callee};
    std::string name = instruction->name;
    call->name = name + ".expanding";
    Instruction* replacement = computation->AddInstruction(std::move(call));
    computation->ReplaceAllUsesWith(instruction, replacement);
    KILN_RETURN_IF_ERROR(computation->RemoveInstruction(instruction));
    replacement->name = std::move(name);
    computation->SortTopologically();  // the call was appended after the users
    changed = true;
  }
  if (!changed) return false;
  KILN_RETURN_IF_ERROR(CallInliner().Run(module).status());
  return true;
}

}  // namespace kiln
