// The host CPU's answers to the shared emitters' target hooks: float
// exp, log, tanh, erf and logistic by vectorisable polynomials (exp with
// whole-vector variants, vector_exp_ir.h); everything else, and double,
// through LLVM's intrinsics and the C library; complex functions from the
// C library and libgcc, which the JIT resolves in the process, called in
// the x86-64 System V C ABI (the one place that knows it).
#pragma once

#include "backends/llvm/target_hooks.h"

namespace kiln::cpu::codegen {

class CpuTargetHooks final : public llvm_ir::TargetHooks {
 public:
  StatusOr<llvm::Value*> EmitUnaryMath(llvm::IRBuilder<>& b, Opcode opcode, llvm::Value* x) const override;
  StatusOr<llvm::Value*> EmitBinaryMath(llvm::IRBuilder<>& b, Opcode opcode, llvm::Value* lhs,
                                        llvm::Value* rhs) const override;
  llvm::Value* EmitComplexCall(llvm::IRBuilder<>& b, llvm_ir::ComplexCall call,
                               const std::vector<llvm::Value*>& arguments) const override;
  llvm::Value* EmitHypot(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) const override;
};

}  // namespace kiln::cpu::codegen
