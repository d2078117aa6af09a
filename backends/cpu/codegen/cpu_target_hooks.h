// The host CPU's answers to the shared emitters' target hooks: float
// exp, log, tanh, erf and logistic by vectorisable polynomials (exp with
// whole-vector variants, vector_exp_ir.h); everything else, and double,
// through LLVM's intrinsics and the C library; complex functions from the
// C library and libgcc, which the JIT resolves in the process, called in
// the C ABI of the target (x86-64 System V or AArch64's AAPCS64: the one
// place that knows them).
#pragma once

#include <llvm/TargetParser/Triple.h>

#include "backends/llvm/target_hooks.h"

namespace kiln::cpu::codegen {

class CpuTargetHooks final : public llvm_ir::TargetHooks {
 public:
  // For the process's own CPU (the JIT's target).
  CpuTargetHooks();
  // For `triple`: AArch64 calls complex functions in AAPCS64, every other
  // architecture in x86-64 System V's convention.
  explicit CpuTargetHooks(const llvm::Triple& triple);

  StatusOr<llvm::Value*> EmitUnaryMath(llvm::IRBuilder<>& b, Opcode opcode, llvm::Value* x) const override;
  StatusOr<llvm::Value*> EmitBinaryMath(llvm::IRBuilder<>& b, Opcode opcode, llvm::Value* lhs,
                                        llvm::Value* rhs) const override;
  llvm::Value* EmitComplexCall(llvm::IRBuilder<>& b, llvm_ir::ComplexCall call,
                               const std::vector<llvm::Value*>& arguments) const override;
  llvm::Value* EmitHypot(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) const override;

 private:
  enum class ComplexAbi { kX86_64, kAArch64 };
  ComplexAbi complex_abi_;
};

}  // namespace kiln::cpu::codegen
