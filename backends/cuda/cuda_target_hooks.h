// The CUDA backend's answers to the shared emitters' target hooks: float
// exp, log, tanh, erf and logistic by the shared polynomials (no library
// needed), every other elementary function from libdevice (__nv_expf, ...;
// libdevice.h links it), complex functions defined in the module by the
// complex runtime (complex_runtime.h), which take complex values as the
// emitters hold them (no C ABI involved).
#pragma once

#include "backends/llvm/target_hooks.h"

namespace kiln::cuda {

class CudaTargetHooks final : public llvm_ir::TargetHooks {
 public:
  StatusOr<llvm::Value*> EmitUnaryMath(llvm::IRBuilder<>& b, Opcode opcode, llvm::Value* x) const override;
  StatusOr<llvm::Value*> EmitBinaryMath(llvm::IRBuilder<>& b, Opcode opcode, llvm::Value* lhs,
                                        llvm::Value* rhs) const override;
  llvm::Value* EmitComplexCall(llvm::IRBuilder<>& b, llvm_ir::ComplexCall call,
                               const std::vector<llvm::Value*>& arguments) const override;
  llvm::Value* EmitHypot(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) const override;
};

}  // namespace kiln::cuda
