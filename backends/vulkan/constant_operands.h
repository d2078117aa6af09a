// Which operand of an elementwise float op the GLSL emitter writes in
// glsl_ops' constant-operand form (BinaryOpWithConstantExpr): one whose
// value is fixed when the kernel is compiled and may hold a zero, which
// lavapipe would fold into a wrong answer (0 x Inf = 0, x / 0 undefined,
// -0 + 0 = -0). Operands known at run time only, and constants without a
// zero, keep the plain op and its speed.
#pragma once

#include <unordered_set>

#include "core/ir.h"

namespace kiln::vulkan {

// Parameters of a called computation (a reduce's combiner) that the
// emitter binds to such constants: a reduce's initial values where they
// meet its first element.
using ConstantParameters = std::unordered_set<const Instruction*>;

// 0 or 1 for a float add, subtract, multiply or divide (real or complex)
// with such an operand (the second where both are), counting the
// `constant_parameters` (may be null) as constants that may hold a zero;
// -1 for every other instruction.
int GuardedConstantOperand(const Instruction& instruction,
                           const ConstantParameters* constant_parameters = nullptr);

// Whether `instruction` (an array) is such a constant: fixed at compile
// time, and may hold a zero.
bool IsConstantThatMayHoldZero(const Instruction& instruction);

}  // namespace kiln::vulkan
