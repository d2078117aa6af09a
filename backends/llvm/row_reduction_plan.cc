#include "backends/llvm/row_reduction_plan.h"

#include <algorithm>
#include <set>

#include "core/passes/fusion.h"

namespace kiln::llvm_ir {

bool HasRowReductionOf(const Computation& computation, const std::vector<int64_t>& row_dims) {
  for (const auto& instruction : computation.instructions()) {
    if (IsRowReduction(*instruction) && instruction->shape.dimensions() == row_dims) return true;
  }
  return false;
}

bool IsStreamingRowReduction(const Computation& computation) {
  bool has_row_reduction = false;
  for (const auto& instruction : computation.instructions()) {
    switch (instruction->opcode) {
      case Opcode::kReduce:
        if (!IsRowReduction(*instruction)) return false;
        has_row_reduction = true;
        break;
      case Opcode::kParameter:
      case Opcode::kConstant:
      case Opcode::kBroadcast:
      case Opcode::kReshape:
      case Opcode::kBitcastConvert:
      case Opcode::kConvert:
      case Opcode::kCopy:
      case Opcode::kSlice:
      case Opcode::kIota:
      case Opcode::kTuple:
      case Opcode::kGetTupleElement:
      case Opcode::kAdd:
      case Opcode::kSubtract:
      case Opcode::kMultiply:
      case Opcode::kMaximum:
      case Opcode::kMinimum:
      case Opcode::kNegate:
      case Opcode::kAbs:
      case Opcode::kCompare:
      case Opcode::kSelect:
      case Opcode::kAnd:
      case Opcode::kOr:
      case Opcode::kNot: break;
      default: return false;
    }
  }
  return has_row_reduction;
}

std::vector<const Instruction*> SharedRowValues(const Computation& computation,
                                                const std::vector<int64_t>& row_dims, int64_t length) {
  auto over_row = [&](const Instruction& i) {
    if (!IsElementwise(i.opcode) || !i.shape.IsArray() ||
        i.shape.rank() != static_cast<int64_t>(row_dims.size()) + 1)
      return false;
    const ElementType type = i.shape.element_type();
    if (type != ElementType::kF32 && type != ElementType::kF64) return false;
    if (length * ByteWidth(type) > kMaxRowBufferBytes) return false;
    const std::vector<int64_t>& dims = i.shape.dimensions();
    return dims.back() == length && std::equal(row_dims.begin(), row_dims.end(), dims.begin());
  };
  auto is_row_reduction = [&](const Instruction& i) {
    return IsRowReduction(i) && i.shape.dimensions() == row_dims;
  };
  // What the outputs read: everything reachable from the root without
  // entering a row reduction (those are computed before the row's loop).
  std::set<const Instruction*> by_outputs;
  std::vector<const Instruction*> pending = {computation.root()};
  while (!pending.empty()) {
    const Instruction* node = pending.back();
    pending.pop_back();
    if (!by_outputs.insert(node).second || is_row_reduction(*node)) continue;
    for (const Instruction* operand : node->operands) pending.push_back(operand);
  }
  // What row reductions read at each position of the row, unconditionally:
  // elementwise values over the row reachable from their inputs.
  std::set<const Instruction*> by_reductions;
  for (const auto& instruction : computation.instructions()) {
    if (!is_row_reduction(*instruction)) continue;
    const size_t inputs = instruction->operands.size() / 2;
    for (size_t i = 0; i < inputs; ++i) pending.push_back(instruction->operand(i));
    while (!pending.empty()) {
      const Instruction* node = pending.back();
      pending.pop_back();
      if (!over_row(*node) || !by_reductions.insert(node).second) continue;
      for (const Instruction* operand : node->operands) pending.push_back(operand);
    }
  }
  std::set<const Instruction*> shared;
  for (const Instruction* node : by_reductions) {
    if (by_outputs.count(node)) shared.insert(node);
  }
  // Keep a shared value only when something outside the shared set reads it.
  std::set<const Instruction*> read_outside;
  for (const auto& instruction : computation.instructions()) {
    if (shared.count(instruction.get())) continue;
    for (const Instruction* operand : instruction->operands) read_outside.insert(operand);
  }
  std::vector<const Instruction*> result;
  for (const auto& instruction : computation.instructions()) {
    if (shared.count(instruction.get()) && read_outside.count(instruction.get()))
      result.push_back(instruction.get());
  }
  return result;
}

}  // namespace kiln::llvm_ir
