#include "core/passes/call_inliner.h"

#include <vector>

#include "core/ir_edit.h"
#include "core/pointer_map.h"

namespace kiln {
namespace {

// Copies the callee's body into `caller` with its parameters bound to the
// call's operands; returns the copy of the callee's root.
Instruction* InlineCall(Instruction& call, Computation& caller, NameUniquer& names) {
  const Computation& callee = *call.called[0];
  PointerMap<Instruction*> copies(callee.instructions().size());
  // The module was verified: every operand is an earlier instruction of the callee.
  const auto copy_of = [&copies](const Instruction* original) { return *copies.Find(original); };
  for (const auto& instruction : callee.instructions()) {
    if (instruction->opcode == Opcode::kParameter) {
      copies.Insert(instruction.get(),
                    call.operand(static_cast<size_t>(instruction->attrs.parameter_number)));
      continue;
    }
    std::vector<Instruction*> operands;
    operands.reserve(instruction->operands.size());
    for (const Instruction* operand : instruction->operands) operands.push_back(copy_of(operand));
    copies.Insert(instruction.get(), CloneInstructionInto(*instruction, caller, std::move(operands),
                                                          names.Make(instruction->name)));
  }
  return copy_of(callee.root());
}

}  // namespace

StatusOr<bool> CallInliner::Run(Module& module) {
  bool changed = false;
  // Callees first, so an inlined body has no calls left in it.
  for (Computation* computation : module.ComputationsPostOrder()) {
    std::vector<Instruction*> calls;
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode == Opcode::kCall && instruction->called.size() == 1 &&
          instruction->called[0]->root() != nullptr) {
        calls.push_back(instruction.get());
      }
    }
    if (calls.empty()) continue;
    NameUniquer names(*computation);
    UseReplacer replacer(*computation);
    for (Instruction* call : calls) {
      replacer.Forward(*call);
      replacer.Replace(call, InlineCall(*call, *computation, names));
    }
    replacer.Apply();
    computation->SortTopologically();
    computation->RemoveDeadInstructions();
    changed = true;
  }
  if (changed) module.RemoveUnreachableComputations();
  return changed;
}

}  // namespace kiln
