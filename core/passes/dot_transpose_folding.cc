#include "core/passes/dot_transpose_folding.h"

#include <utility>
#include <vector>

#include "core/ir_edit.h"

namespace kiln {
namespace {

bool IsFoldableProduct(const Instruction& dot) {
  if (dot.opcode != Opcode::kDot || !dot.shape.IsArray() || dot.shape.rank() != 2) return false;
  const DotDimensionNumbers& a = dot.attrs.dot;
  return dot.operand(0)->shape.rank() == 2 && dot.operand(1)->shape.rank() == 2 &&
         a.lhs_batch_dimensions.empty() && a.rhs_batch_dimensions.empty() &&
         a.lhs_contracting_dimensions.size() == 1 && a.rhs_contracting_dimensions.size() == 1;
}

bool FoldIn(Computation& computation) {
  std::vector<std::pair<Instruction*, Instruction*>> candidates;  // transpose, dot
  for (const auto& owned : computation.instructions()) {
    Instruction* transpose = owned.get();
    if (transpose->opcode != Opcode::kTranspose || transpose->attrs.dimensions != std::vector<int64_t>{1, 0})
      continue;
    Instruction* dot = transpose->operand(0);
    if (!IsFoldableProduct(*dot) || dot == computation.root()) continue;
    candidates.emplace_back(transpose, dot);
  }
  // The user map costs an allocation per instruction: most computations have
  // no transposed product at all and never need it (issue 13's compile time).
  if (candidates.empty()) return false;
  const UserMap users = ComputeUsers(computation);
  std::vector<std::pair<Instruction*, Instruction*>> folds;
  for (auto [transpose, dot] : candidates) {
    const auto found = users.find(dot);
    if (found == users.end() || found->second.size() != 1) continue;
    folds.emplace_back(transpose, dot);
  }
  UseReplacer replacer(computation);
  for (auto [transpose, dot] : folds) {
    Attributes attrs = dot->attrs;
    std::swap(attrs.dot->lhs_contracting_dimensions, attrs.dot->rhs_contracting_dimensions);
    // The operands trade places, and so do their precisions.
    if (attrs.operand_precision.size() == 2)
      std::swap(attrs.operand_precision[0], attrs.operand_precision[1]);
    auto swapped = MakeInstruction(Opcode::kDot, transpose->shape, {dot->operand(1), dot->operand(0)}, attrs);
    swapped->name = dot->name + ".transposed";
    Instruction* added = computation.AddInstruction(std::move(swapped));
    replacer.Replace(transpose, added);
  }
  if (!replacer.Apply()) return false;
  computation.SortTopologically();
  computation.RemoveDeadInstructions();
  return true;
}

}  // namespace

StatusOr<bool> DotTransposeFolding::Run(Module& module) {
  bool changed = false;
  for (const auto& computation : module.computations()) changed = FoldIn(*computation) || changed;
  return changed;
}

}  // namespace kiln
