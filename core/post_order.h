// The one depth-first walk behind every instruction post-order: a
// computation's (Computation::PostOrder) and fusion's, which starts again
// from each instruction the root does not reach.
#pragma once

#include <vector>

#include "core/pointer_map.h"

namespace kiln {

struct Instruction;

// Appends to `order` every instruction reachable from `start` through
// operands that is not yet in `visited`, operands before their users, each
// operand's whole cone before the next operand's; marks them visited.
// Iterative, so a chain of a million instructions does not overflow the
// stack. Does not count the walk (callers count what they walked).
void AppendPostOrder(Instruction* start, PointerSet& visited, std::vector<Instruction*>& order);

}  // namespace kiln
