// What a reduce's (or reduce-window's, scatter's) computation does when it
// is one elementwise op of its two scalar parameters: the one place that
// reads it, for the autodiff rules, the backends and the result checks.
#pragma once

#include <optional>

#include "core/ir.h"

namespace kiln {

// The opcode of `combiner`'s root when that root is one binary op of the
// combiner's two parameters, in either order; nullopt when the combiner
// has other than two parameters or its root does anything else. Either
// order reads the same only for commutative ops: a caller maps the
// opcodes it takes, and those must be commutative (a reducer's, an atomic
// instruction's).
std::optional<Opcode> BinaryCombinerOpcode(const Computation& combiner);

// The elementwise opcode `reduce`'s computation applies to its two scalar
// parameters when it is add, maximum or minimum; nullopt for one operand
// pair with any other computation, and for variadic reduces.
std::optional<Opcode> SimpleReducer(const Instruction& reduce);

// Whether `instruction` is a reduce that adds f16 or bf16 elements: XLA
// leaves the order and the width of those additions open, and backends
// differ in both (the interpreter adds in the element type, one element
// after another; vulkan adds in f32 and rounds once).
bool IsNarrowFloatSum(const Instruction& instruction);

}  // namespace kiln
