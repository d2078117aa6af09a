// The CUDA backend's answers to the shared emitters' target hooks: float
// exp, log, tanh, erf and logistic by the shared polynomials (no library
// needed), every other elementary function from libdevice (__nv_expf, ...;
// libdevice.h links it), complex functions defined in the module by the
// complex runtime (complex_runtime.h).
#pragma once

#include "backends/llvm/target_hooks.h"

namespace kiln::cuda {

class CudaTargetHooks final : public llvm_ir::TargetHooks {
 public:
  StatusOr<llvm::Value*> EmitUnaryMath(llvm::IRBuilder<>& b, Opcode opcode, llvm::Value* x) const override;
  StatusOr<llvm::Value*> EmitBinaryMath(llvm::IRBuilder<>& b, Opcode opcode, llvm::Value* lhs,
                                        llvm::Value* rhs) const override;
  llvm::FunctionCallee ComplexFunction(llvm::Module& module, const std::string& name,
                                       llvm::FunctionType* type) const override;
};

}  // namespace kiln::cuda
