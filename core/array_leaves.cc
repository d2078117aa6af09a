#include "core/array_leaves.h"

namespace kiln {

int64_t ArrayLeafCount(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t count = 0;
    for (const Shape& element : shape.tuple_shapes()) count += ArrayLeafCount(element);
    return count;
  }
  return shape.IsArray() ? 1 : 0;
}

std::vector<Shape> ArrayLeaves(const Shape& shape) {
  std::vector<Shape> leaves;
  for (Shape& leaf : shape.Leaves()) {
    if (leaf.IsArray()) leaves.push_back(std::move(leaf));
  }
  return leaves;
}

bool AllArrays(const Instruction& instruction) {
  if (!instruction.shape.IsArray() && !instruction.shape.IsTuple()) return false;
  for (const Shape& leaf : instruction.shape.Leaves()) {
    if (!leaf.IsArray()) return false;
  }
  for (const Instruction* operand : instruction.operands) {
    if (!operand->shape.IsArray()) return false;
  }
  return true;
}

}  // namespace kiln
