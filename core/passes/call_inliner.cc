#include "core/passes/call_inliner.h"

#include <memory>
#include <unordered_map>
#include <vector>

#include "core/ir_edit.h"
#include "core/pointer_map.h"

namespace kiln {
namespace {

// Copies the callee's body into `caller` with its parameters bound to the
// call's operands; returns the copy of the callee's root.
Instruction* InlineCallByCopy(Instruction& call, Computation& caller, NameUniquer& names) {
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

// Moves the body of a callee that nothing else calls into `caller`: the same
// instruction objects, renamed where the caller uses their names, their
// parameter operands bound to the call's operands. The callee is left empty
// and unreachable. (Copying a callee called once cost an eighth of compiling
// a 50k-instruction while body, the copy and the original alive at once.)
Instruction* InlineCallByMove(Instruction& call, Computation& caller, NameUniquer& names) {
  Computation& callee = *call.called[0];
  const Instruction* root = callee.root();
  // A parameter's number, for each parameter of the callee.
  PointerMap<size_t> parameter_numbers(callee.parameters().size());
  for (const Instruction* parameter : callee.parameters()) {
    parameter_numbers.Insert(parameter, static_cast<size_t>(parameter->attrs.parameter_number));
  }
  Instruction* result = nullptr;
  if (const size_t* number = parameter_numbers.Find(root)) result = call.operand(*number);
  for (std::unique_ptr<Instruction>& instruction : callee.ReleaseInstructions()) {
    if (instruction->opcode == Opcode::kParameter) continue;  // destroyed: its uses read the call's operand
    for (Instruction*& operand : instruction->operands) {
      if (const size_t* number = parameter_numbers.Find(operand)) operand = call.operand(*number);
    }
    instruction->name = names.Make(instruction->name);
    Instruction* moved = caller.AddInstruction(std::move(instruction));
    if (moved == root) result = moved;
  }
  return result;
}

// How many instructions of the module call each computation.
std::unordered_map<const Computation*, int> CallSites(const Module& module) {
  std::unordered_map<const Computation*, int> sites;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      for (const Computation* callee : instruction->called) ++sites[callee];
    }
  }
  return sites;
}

}  // namespace

StatusOr<bool> CallInliner::Run(Module& module) {
  bool changed = false;
  const std::unordered_map<const Computation*, int> call_sites = CallSites(module);
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
      const Computation* callee = call->called[0];
      const bool called_once = callee != module.entry() && call_sites.at(callee) == 1;
      replacer.Replace(call, called_once ? InlineCallByMove(*call, *computation, names)
                                         : InlineCallByCopy(*call, *computation, names));
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
