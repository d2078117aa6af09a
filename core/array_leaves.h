// The array leaves of (possibly tuple-shaped) values: what a backend stores
// for them. Tokens and empty tuples have none.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir.h"
#include "core/shape.h"

namespace kiln {

int64_t ArrayLeafCount(const Shape& shape);
std::vector<Shape> ArrayLeaves(const Shape& shape);
// Whether every leaf of the instruction's result, and every operand, is an
// array (what a kernel can take and produce).
bool AllArrays(const Instruction& instruction);

}  // namespace kiln
