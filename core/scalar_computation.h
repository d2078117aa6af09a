// The small called computations passes and transformations add to a module:
// (lhs, rhs) -> opcode(lhs, rhs) on scalars, e.g. the add a reduce uses.
#pragma once

#include <string>

#include "core/element_type.h"
#include "core/ir.h"
#include "core/opcode.h"

namespace kiln {

// Adds to `module` a computation named `name` (AddComputation makes it
// unique) of two scalar
// parameters "lhs" and "rhs" of `type` whose root is `opcode` of them, and
// returns it. `opcode` is a binary elementwise op.
Computation* AddScalarBinaryComputation(Module& module, Opcode opcode, ElementType type,
                                        const std::string& name);

}  // namespace kiln
