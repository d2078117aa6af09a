// Scalar semantics of Kiln's elementwise ops in GLSL, matching the
// interpreter (core/interpreter/scalar_ops.h, elementwise*.cc): integer
// division by zero, shifts past the width, NaN-propagating max/min,
// saturating float->int conversion, and so on. Each function returns a GLSL
// expression over value-type operands (see glsl_types.h), not yet normalised
// to a narrow type; or UNIMPLEMENTED saying why the op cannot be had here.
#pragma once

#include <string>

#include "backends/vulkan/glsl_types.h"

namespace kiln::vulkan {

StatusOr<std::string> UnaryOpExpr(Opcode opcode, ElementType type, const std::string& x,
                                  GlslPrelude& prelude);
StatusOr<std::string> BinaryOpExpr(Opcode opcode, ElementType type, const std::string& a,
                                   const std::string& b, GlslPrelude& prelude);
// A float add, subtract, multiply or divide (real or complex) whose operand
// `constant_operand` (0 or 1) is fixed when the kernel is compiled, written
// so that no driver can fold it to a wrong value: lavapipe's backend
// (gallivm) takes x * 0 and 0 / x for 0, x / 0 for an undefined value and
// x + 0 for x, whatever the SPIR-V's float controls and `precise` say, so
// 0 x Inf gave 0, x / 0 garbage and -0 + 0 gave -0. The helpers test
// whether the constant is zero and, if so, give IEEE's answer from the
// other operand's class and sign; the driver folds that test, so a
// multiply by a nonzero constant stays one multiply. Other opcodes and
// types: as BinaryOpExpr.
StatusOr<std::string> BinaryOpWithConstantExpr(Opcode opcode, ElementType type, const std::string& a,
                                               const std::string& b, int constant_operand,
                                               GlslPrelude& prelude);
StatusOr<std::string> CompareExpr(ComparisonDirection direction, ComparisonType comparison, ElementType type,
                                  const std::string& a, const std::string& b, GlslPrelude& prelude);
// XLA convert: wraps between integers, saturates float->int (NaN -> 0).
StatusOr<std::string> ConvertExpr(ElementType from, ElementType to, const std::string& x,
                                  GlslPrelude& prelude);
// Same-width bit reinterpretation.
StatusOr<std::string> BitcastExpr(ElementType from, ElementType to, const std::string& x,
                                  GlslPrelude& prelude);
StatusOr<std::string> ReducePrecisionExpr(ElementType type, int64_t exponent_bits, int64_t mantissa_bits,
                                          const std::string& x, GlslPrelude& prelude);

}  // namespace kiln::vulkan
