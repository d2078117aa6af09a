// Vectorisable single-precision approximations of exp, log, tanh, logistic
// and erf: polynomials and bit manipulation, no libm calls, so loops using
// them vectorise. log, tanh and erf are emitted inline as plain IR; exp (and
// logistic through it) as a call with whole-vector variants. Each is
// accurate to a few ulp over the whole float range and handles inf and NaN.
#pragma once

#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>

namespace kiln::cpu::codegen {

llvm::Value* EmitFastExp(llvm::IRBuilder<>& b, llvm::Value* x);

// exp(x) for a float x as a call to a module-internal function that declares
// vector variants of 4, 8 and 16 lanes (the vector-function ABI attribute),
// so the loop vectoriser calls a whole-vector exp. On AVX-512 hosts the
// variants apply 2^n with vscalefps, which the vectoriser cannot produce
// from scalar code (about half the instructions of EmitFastExp). The calls
// are inlined after vectorisation: see IsVectorizableMathFunction.
llvm::Value* EmitVectorizableExp(llvm::IRBuilder<>& b, llvm::Value* x);

// True for the functions EmitVectorizableExp defines, which the optimiser
// must inline once loops are vectorised.
bool IsVectorizableMathFunction(const llvm::Function& function);
llvm::Value* EmitFastLog(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitFastTanh(llvm::IRBuilder<>& b, llvm::Value* x);
// Calls EmitVectorizableExp, so a kernel using it must be optimised by Jit.
llvm::Value* EmitFastLogistic(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitFastErf(llvm::IRBuilder<>& b, llvm::Value* x);

}  // namespace kiln::cpu::codegen
