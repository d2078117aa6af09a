#include "core/passes/int8_contraction_narrowing.h"

#include <vector>

#include "core/ir_edit.h"

namespace kiln {
namespace {

// The s8 value `operand` widens to s32, or null.
Instruction* WidenedInt8(Instruction* operand) {
  if (operand->opcode != Opcode::kConvert || !operand->shape.IsArray() ||
      operand->shape.element_type() != ElementType::kS32) {
    return nullptr;
  }
  Instruction* source = operand->operand(0);
  if (!source->shape.IsArray() || source->shape.element_type() != ElementType::kS8) return nullptr;
  return source;
}

bool Narrowable(const Instruction& instruction) {
  return instruction.opcode == Opcode::kDot && instruction.shape.IsArray() &&
         instruction.shape.element_type() == ElementType::kS32 && instruction.operands.size() == 2 &&
         WidenedInt8(instruction.operand(0)) != nullptr && WidenedInt8(instruction.operand(1)) != nullptr;
}

bool NarrowIn(Computation& computation) {
  std::vector<Instruction*> targets;
  for (const auto& instruction : computation.instructions()) {
    if (Narrowable(*instruction)) targets.push_back(instruction.get());
  }
  if (targets.empty()) return false;
  NameUniquer names(computation);
  UseReplacer replacer(computation);
  for (Instruction* dot : targets) {
    auto narrowed = MakeInstruction(Opcode::kDot, dot->shape,
                                    {WidenedInt8(dot->operand(0)), WidenedInt8(dot->operand(1))}, dot->attrs);
    replacer.Replace(dot, AddNamedInstruction(computation, names, std::move(narrowed), dot->name + ".s8"));
  }
  replacer.Apply();
  computation.SortTopologically();
  computation.RemoveDeadInstructions();
  return true;
}

}  // namespace

StatusOr<bool> Int8ContractionNarrowing::Run(Module& module) {
  bool changed = false;
  for (const auto& computation : module.computations()) changed = NarrowIn(*computation) || changed;
  return changed;
}

}  // namespace kiln
