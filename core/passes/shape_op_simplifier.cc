#include "core/passes/shape_op_simplifier.h"

#include <vector>

#include "core/passes/rewrite_context.h"

namespace kiln {
namespace {

bool IsScalarBroadcast(const Instruction& instruction) {
  return instruction.opcode == Opcode::kBroadcast && instruction.operand(0)->shape.IsScalar();
}

// Ops that only move or select elements: applied to a broadcast scalar they
// give the same scalar broadcast to their own shape.
bool MovesElementsOnly(Opcode opcode) {
  switch (opcode) {
    case Opcode::kReshape:
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kReverse:
    case Opcode::kCopy:
    case Opcode::kBroadcast: return true;
    default: return false;
  }
}

// Elementwise ops whose value depends only on their operands' values (not on
// position or state), so they commute with a broadcast.
bool IsPureElementwise(const Instruction& instruction) {
  if (!IsElementwise(instruction.opcode) || instruction.operands.empty()) return false;
  return instruction.shape.IsArray();
}

Instruction* RewriteMovedScalar(Instruction& instruction, RewriteContext& context) {
  if (instruction.operands.size() != 1 || !IsScalarBroadcast(*instruction.operand(0))) return nullptr;
  if (instruction.opcode == Opcode::kBroadcast) return nullptr;  // the simplifier merges broadcast chains
  return context.Broadcast(instruction.operand(0)->operand(0), instruction.shape, {});
}

Instruction* RewriteElementwiseOfScalars(Instruction& instruction, RewriteContext& context) {
  if (instruction.shape.rank() == 0) return nullptr;
  std::vector<Instruction*> scalars;
  for (Instruction* operand : instruction.operands) {
    if (!IsScalarBroadcast(*operand)) return nullptr;
    scalars.push_back(operand->operand(0));
  }
  auto scalar_op = std::make_unique<Instruction>(instruction);
  scalar_op->operands = std::move(scalars);
  scalar_op->shape = Shape::Scalar(instruction.shape.element_type());
  Instruction* computed = context.Add(std::move(scalar_op), instruction.name);
  return context.Broadcast(computed, instruction.shape, {});
}

// A transpose keeps the data order when the dimensions larger than 1 keep
// their relative order.
Instruction* RewriteBitcastTranspose(Instruction& instruction, RewriteContext& context) {
  const Shape& operand = instruction.operand(0)->shape;
  int64_t last = -1;
  for (int64_t d : instruction.attrs.dimensions) {
    if (d < 0 || d >= operand.rank()) return nullptr;
    if (operand.dimensions(d) == 1) continue;
    if (d < last) return nullptr;
    last = d;
  }
  return context.Reshape(instruction.operand(0), instruction.shape);
}

Instruction* Rewrite(Instruction& instruction, RewriteContext& context) {
  if (MovesElementsOnly(instruction.opcode)) {
    if (Instruction* rewritten = RewriteMovedScalar(instruction, context)) return rewritten;
  }
  if (instruction.opcode == Opcode::kTranspose) return RewriteBitcastTranspose(instruction, context);
  if (IsPureElementwise(instruction)) return RewriteElementwiseOfScalars(instruction, context);
  return nullptr;
}

}  // namespace

StatusOr<bool> ShapeOpSimplifier::Run(Module& module) {
  bool changed = false;
  for (const auto& owned : module.computations()) {
    Computation& computation = *owned;
    RewriteContext context(module, computation);
    std::vector<Instruction*> order;
    for (const auto& instruction : computation.instructions()) order.push_back(instruction.get());
    UseReplacer replacer(computation);
    for (Instruction* instruction : order) {
      replacer.Forward(*instruction);
      Instruction* replacement = Rewrite(*instruction, context);
      if (replacement != nullptr) replacer.Replace(instruction, replacement);
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
