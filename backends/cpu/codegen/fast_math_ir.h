// Vectorisable single-precision approximations of exp, log, tanh, logistic
// and erf, emitted inline as plain IR (polynomials and bit manipulation, no
// libm calls), so loops using them vectorise to <8 x float>. Each is accurate
// to a few ulp over the whole float range and handles inf and NaN.
#pragma once

#include <llvm/IR/IRBuilder.h>

namespace kiln::cpu::codegen {

llvm::Value* EmitFastExp(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitFastLog(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitFastTanh(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitFastLogistic(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitFastErf(llvm::IRBuilder<>& b, llvm::Value* x);

}  // namespace kiln::cpu::codegen
