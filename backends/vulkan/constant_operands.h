// Which operand of an elementwise float op the GLSL emitter writes in
// glsl_ops' constant-operand form (BinaryOpWithConstantExpr): one whose
// value is fixed when the kernel is compiled and may hold a zero, which
// lavapipe would fold into a wrong answer (0 x Inf = 0, x / 0 undefined,
// -0 + 0 = -0). Operands known at run time only, and constants without a
// zero, keep the plain op and its speed.
#pragma once

#include "core/ir.h"

namespace kiln::vulkan {

// 0 or 1 for a float add, subtract, multiply or divide (real or complex)
// with such an operand (the second where both are); -1 for every other
// instruction.
int GuardedConstantOperand(const Instruction& instruction);

}  // namespace kiln::vulkan
