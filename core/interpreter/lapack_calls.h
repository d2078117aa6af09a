// Runs the built-in LAPACK custom-call targets (core/builtin_custom_calls.h)
// on host literals, batch by batch, through the system's LAPACK.
#pragma once

#include "core/builtin_custom_calls.h"
#include "core/interpreter/eval_context.h"

namespace kiln::interpreter {

// `instruction` is a custom-call to `target`. Its result follows the XLA FFI
// handlers JAX targets: the same tuple of factor, auxiliary arrays and
// LAPACK's `info` (0, or > 0 for a singular or not positive definite
// matrix), with the values JAX gets; layouts are metadata only, as for every
// literal. INVALID_ARGUMENT naming the instruction and target for operands,
// result shapes or attributes the target cannot take.
StatusOr<Literal> EvaluateLapackCall(const BuiltinCustomCall& target, const Instruction& instruction,
                                     Operands operands);

}  // namespace kiln::interpreter
