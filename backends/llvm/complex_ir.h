// Complex (c64, c128) values in LLVM IR: a <2 x float> or <2 x double>
// holding the real and imaginary parts, in registers and in memory (the
// layout of std::complex). Arithmetic matches the interpreter, which uses
// std::complex: add, subtract and negate part by part; multiply inline,
// with C Annex G's careful product (libgcc's __mulsc3/__muldc3 on the CPU)
// when the naive one is NaN in both parts (as GCC compiles it); divide by
// Annex G's quotient; abs with hypot; the transcendental functions as C99's
// complex functions (cexpf, ...), which is what std::complex calls. Each of
// those is the target's (TargetHooks::EmitComplexCall, EmitHypot): the CPU
// calls the C library in its C ABI, a GPU computes them with code of its own.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include "backends/llvm/target_hooks.h"
#include "core/attributes.h"
#include "core/element_type.h"
#include "core/opcode.h"
#include "core/status.h"

namespace kiln::llvm_ir {

bool ComplexUnarySupported(Opcode opcode);
bool ComplexBinarySupported(Opcode opcode);

// `type` is the complex element type of `x` (and of the result, except abs:
// its real part type).
// What is computed out of line comes from `target` (TargetHooks::EmitComplexCall).
StatusOr<llvm::Value*> EmitComplexUnary(llvm::IRBuilder<>& b, const TargetHooks& target, Opcode opcode,
                                        ElementType type, llvm::Value* x);
StatusOr<llvm::Value*> EmitComplexBinary(llvm::IRBuilder<>& b, const TargetHooks& target, Opcode opcode,
                                         ElementType type, llvm::Value* lhs, llvm::Value* rhs);
// Equal or not equal (the only comparisons complex numbers have).
llvm::Value* EmitComplexCompare(llvm::IRBuilder<>& b, ComparisonDirection direction, llvm::Value* lhs,
                                llvm::Value* rhs);

llvm::Value* MakeComplex(llvm::IRBuilder<>& b, llvm::Value* real, llvm::Value* imag);
llvm::Value* RealPart(llvm::IRBuilder<>& b, llvm::Value* z);
llvm::Value* ImagPart(llvm::IRBuilder<>& b, llvm::Value* z);

}  // namespace kiln::llvm_ir
