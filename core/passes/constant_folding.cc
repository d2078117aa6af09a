#include "core/passes/constant_folding.h"

#include <vector>

#include "core/interpreter/evaluator.h"
#include "core/ir_edit.h"
#include "core/passes/rewrite_context.h"

namespace kiln {
namespace {

bool ShouldFold(const Instruction& instruction, int64_t max_result_bytes) {
  if (!MayFold(instruction.opcode) || instruction.operands.empty()) return false;
  if (!instruction.shape.IsArray() || instruction.shape.byte_size() > max_result_bytes) return false;
  for (const Instruction* operand : instruction.operands) {
    if (operand->opcode != Opcode::kConstant || !operand->literal) return false;
  }
  return true;
}

// Runs `instruction` alone on its constant operands in a scratch module (the
// computations it calls are copied in).
StatusOr<Literal> Evaluate(const Instruction& instruction) {
  Module scratch("constant_folding");
  std::vector<Computation*> called;
  for (const Computation* callee : instruction.called) called.push_back(scratch.ImportComputation(*callee));
  auto computation = std::make_unique<Computation>("fold");
  std::vector<Instruction*> operands;
  for (size_t i = 0; i < instruction.operands.size(); ++i) {
    operands.push_back(
        CloneInstructionInto(*instruction.operand(i), *computation, {}, "operand." + std::to_string(i)));
  }
  Instruction* clone = CloneInstructionInto(instruction, *computation, std::move(operands), "folded");
  clone->called = std::move(called);
  computation->set_root(clone);
  Computation* entry = scratch.AddComputation(std::move(computation));
  scratch.set_entry(entry);
  const interpreter::ModulePlan plan = interpreter::ModulePlan::Build(scratch);
  interpreter::Evaluator evaluator(plan, nullptr, 0);
  return evaluator.Run(*entry, {});
}

}  // namespace

StatusOr<bool> ConstantFolding::Run(Module& module) {
  bool changed = false;
  for (const auto& owned : module.computations()) {
    Computation& computation = *owned;
    RewriteContext context(module, computation);
    std::vector<Instruction*> order;
    for (const auto& instruction : computation.instructions()) order.push_back(instruction.get());
    UseReplacer replacer(computation);
    for (Instruction* instruction : order) {
      replacer.Forward(*instruction);
      if (!ShouldFold(*instruction, max_result_bytes_)) continue;
      StatusOr<Literal> value = Evaluate(*instruction);
      // An op the interpreter refuses is left for run time, where it fails the same way.
      if (!value.ok() || !value->shape().Compatible(instruction->shape)) continue;
      value->set_layout(instruction->shape.layout());
      Instruction* constant = context.Constant(std::move(value).value());
      constant->shape = instruction->shape;
      replacer.Replace(instruction, constant);
    }
    if (replacer.Apply()) {
      computation.SortTopologically();
      computation.RemoveDeadInstructions();
      changed = true;
    }
  }
  return changed;
}

}  // namespace kiln
