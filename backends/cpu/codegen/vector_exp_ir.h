// The CPU's exp for float values: a call that the loop vectoriser turns
// into a call of a whole-vector exp, with AVX-512's vscalefps where the
// host has it.
#pragma once

#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>

namespace kiln::cpu::codegen {

// exp(x) for a float x as a call to a module-internal function that declares
// vector variants of 4, 8 and 16 lanes (the vector-function ABI attribute),
// so the loop vectoriser calls a whole-vector exp. On AVX-512 hosts the
// variants apply 2^n with vscalefps, which the vectoriser cannot produce
// from scalar code (about half the instructions of llvm_ir::EmitFastExp).
// The functions carry llvm_ir::kVectorMathAttribute; their calls are
// inlined after vectorisation: see IsVectorizableMathFunction.
llvm::Value* EmitVectorizableExp(llvm::IRBuilder<>& b, llvm::Value* x);

// True for the functions EmitVectorizableExp defines, which the optimiser
// must inline once loops are vectorised.
bool IsVectorizableMathFunction(const llvm::Function& function);

}  // namespace kiln::cpu::codegen
