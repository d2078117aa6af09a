// Single-precision approximations of exp, log, log1p, tanh and erf as plain LLVM
// IR: polynomials and bit manipulation, no library calls, so loops using
// them vectorise on any target. Each is accurate to a few ulp over the
// whole float range and handles inf and NaN. A target's hooks
// (target_hooks.h) choose whether to use them.
#pragma once

#include <llvm/IR/IRBuilder.h>

namespace kiln::llvm_ir {

// exp(x) = 2^n * mantissa for a float x (or vector of floats), x clamped to
// where float exp is finite and not zero: what is left is applying 2^n,
// which EmitFastExp does with integer exponent arithmetic and a target may
// do with an instruction of its own (the CPU's AVX-512 vscalefps).
struct ExpParts {
  llvm::Value* n = nullptr;         // a whole number, as a float
  llvm::Value* mantissa = nullptr;  // e^r, |r| <= ln2 / 2
};
ExpParts EmitExpParts(llvm::IRBuilder<>& b, llvm::Value* x);

llvm::Value* EmitFastExp(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitFastLog(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitFastLog1p(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitFastTanh(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitFastErf(llvm::IRBuilder<>& b, llvm::Value* x);

}  // namespace kiln::llvm_ir
