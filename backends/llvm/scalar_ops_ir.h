// Scalar semantics of Kiln's elementwise ops as LLVM IR, on values in their
// compute type (element_ir.h). Each function mirrors the interpreter's
// scalar code (core/interpreter/scalar_ops.h, elementwise*.cc) exactly for
// integers and up to rounding for floats; F16/BF16 results are re-rounded.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include "backends/llvm/target_hooks.h"
#include "core/attributes.h"
#include "core/element_type.h"
#include "core/opcode.h"
#include "core/status.h"

namespace kiln::llvm_ir {

// Whether the op (unary or binary kind, is-finite, reduce-precision, ...) is
// defined for the element type; the same answer as the interpreter's.
bool UnaryOpSupported(Opcode opcode, ElementType type);
bool BinaryOpSupported(Opcode opcode, ElementType type);

// The elementary functions, complex helpers and float min/max come from
// `target` (target_hooks.h).
StatusOr<llvm::Value*> EmitUnaryOp(llvm::IRBuilder<>& b, const TargetHooks& target, Opcode opcode,
                                   ElementType type, llvm::Value* x);
StatusOr<llvm::Value*> EmitBinaryOp(llvm::IRBuilder<>& b, const TargetHooks& target, Opcode opcode,
                                    ElementType type, llvm::Value* lhs, llvm::Value* rhs);
llvm::Value* EmitCompare(llvm::IRBuilder<>& b, ComparisonDirection direction, ComparisonType comparison,
                         ElementType type, llvm::Value* lhs, llvm::Value* rhs);
llvm::Value* EmitConvert(llvm::IRBuilder<>& b, ElementType from, ElementType to, llvm::Value* x);
llvm::Value* EmitBitcastConvert(llvm::IRBuilder<>& b, ElementType from, ElementType to, llvm::Value* x);
llvm::Value* EmitIsFinite(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitReducePrecision(llvm::IRBuilder<>& b, ElementType type, llvm::Value* x,
                                 int64_t exponent_bits, int64_t mantissa_bits);
// XLA's maximum/minimum: NaN in either operand gives NaN.
llvm::Value* EmitMaximum(llvm::IRBuilder<>& b, const TargetHooks& target, ElementType type, llvm::Value* lhs,
                         llvm::Value* rhs);
llvm::Value* EmitMinimum(llvm::IRBuilder<>& b, const TargetHooks& target, ElementType type, llvm::Value* lhs,
                         llvm::Value* rhs);

}  // namespace kiln::llvm_ir
