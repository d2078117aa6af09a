// Shape inference: one function per op, shared by the builder, the HLO parser
// and the verifier, so an illegal program is refused the same way whatever
// its origin. Every error is INVALID_ARGUMENT and names the op, the operand
// shapes and what was expected.
#pragma once

#include <span>

#include "core/attributes.h"
#include "core/opcode.h"
#include "core/shape.h"
#include "core/status.h"

namespace kiln {

// Infers the result shape of `opcode` over operands of the given shapes.
// `called` are the signatures of the called computations (see Instruction).
// `declared` is the result shape the caller intends, required by ops whose
// result cannot be derived from operands alone (parameter, constant,
// broadcast, reshape, iota, rng, rng-bit-generator, convert,
// bitcast-convert, custom-call, infeed, recv); for those the declared shape is
// validated and returned. For other ops it may be null; when it is given, the
// inferred shape is returned and the caller compares.
StatusOr<Shape> InferShape(Opcode opcode, std::span<const Shape> operands, const Attributes& attrs,
                           std::span<const ProgramShape> called, const Shape* declared);

}  // namespace kiln
