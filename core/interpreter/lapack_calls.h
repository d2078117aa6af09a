// Runs the built-in LAPACK custom-call targets (core/builtin_custom_calls.h)
// on host literals, batch by batch, through the system's LAPACK.
#pragma once

#include <vector>

#include "core/builtin_custom_calls.h"
#include "core/interpreter/eval_context.h"

namespace kiln::interpreter {

// The arrays of one call: each operand's data, then each array leaf of the
// result (a tuple's in order, or the one array), each dense and row-major
// as the instruction's shapes say.
struct LapackBuffers {
  std::vector<const void*> operands;
  std::vector<void*> results;
};

// What RunLapackCall would refuse for `instruction`'s shapes and attributes
// (the INVALID_ARGUMENT below), without LAPACK or any array: a backend asks
// once, when it plans the call. Thread-safe.
Status CheckLapackCall(const BuiltinCustomCall& target, const Instruction& instruction);

// Runs `instruction` on `buffers`, which the caller owns and keeps for the
// call. A result may share operand 0's buffer where the target updates it
// in place (XLA's output_to_operand_aliasing); otherwise none overlap.
// Every element of every result is written (vectors not asked for are
// zeros). LAPACK is loaded on the first call: UNAVAILABLE naming the library
// and the package when it cannot be; INVALID_ARGUMENT as CheckLapackCall;
// INTERNAL when `buffers` holds the wrong number of arrays. Thread-safe:
// scratch is per thread.
Status RunLapackCall(const BuiltinCustomCall& target, const Instruction& instruction,
                     const LapackBuffers& buffers);

// `instruction` is a custom-call to `target`. Its result follows the XLA FFI
// handlers JAX targets: the same tuple of factor, auxiliary arrays and
// LAPACK's `info` (0, or > 0 for a singular or not positive definite
// matrix), with the values JAX gets; layouts are metadata only, as for every
// literal. INVALID_ARGUMENT naming the instruction and target for operands,
// result shapes or attributes the target cannot take. RunLapackCall on
// literals.
StatusOr<Literal> EvaluateLapackCall(const BuiltinCustomCall& target, const Instruction& instruction,
                                     Operands operands);

}  // namespace kiln::interpreter
