#include "backends/cuda/cuda_target_hooks.h"

#include <llvm/IR/Constants.h>

#include "backends/cuda/complex_runtime.h"
#include "backends/llvm/fast_math_ir.h"

namespace kiln::cuda {
namespace {

// libdevice's function for the C library's `name`: __nv_ + name (+ "f" for
// float values, which CallMathFunction adds).
llvm::Value* CallLibdevice(llvm::IRBuilder<>& b, const std::string& name,
                           std::initializer_list<llvm::Value*> args) {
  return llvm_ir::CallMathFunction(b, "__nv_" + name, args);
}

}  // namespace

StatusOr<llvm::Value*> CudaTargetHooks::EmitUnaryMath(llvm::IRBuilder<>& b, Opcode opcode,
                                                      llvm::Value* x) const {
  const bool fast = x->getType()->isFloatTy();
  switch (opcode) {
    case Opcode::kCbrt: return CallLibdevice(b, "cbrt", {x});
    case Opcode::kErf: return fast ? llvm_ir::EmitFastErf(b, x) : CallLibdevice(b, "erf", {x});
    case Opcode::kExp: return fast ? llvm_ir::EmitFastExp(b, x) : CallLibdevice(b, "exp", {x});
    case Opcode::kExpm1: return CallLibdevice(b, "expm1", {x});
    case Opcode::kLog: return fast ? llvm_ir::EmitFastLog(b, x) : CallLibdevice(b, "log", {x});
    case Opcode::kLog1p: return CallLibdevice(b, "log1p", {x});
    case Opcode::kLogistic: {
      // 1 / (1 + exp(-x)), the interpreter's formula.
      llvm::Value* negated = b.CreateFNeg(x);
      llvm::Value* e = fast ? llvm_ir::EmitFastExp(b, negated) : CallLibdevice(b, "exp", {negated});
      llvm::Value* one = llvm::ConstantFP::get(x->getType(), 1.0);
      return b.CreateFDiv(one, b.CreateFAdd(one, e));
    }
    case Opcode::kSin: return CallLibdevice(b, "sin", {x});
    case Opcode::kCos: return CallLibdevice(b, "cos", {x});
    case Opcode::kTan: return CallLibdevice(b, "tan", {x});
    case Opcode::kTanh: return fast ? llvm_ir::EmitFastTanh(b, x) : CallLibdevice(b, "tanh", {x});
    default: break;
  }
  return Unimplemented("cuda: no elementary function ", OpcodeName(opcode));
}

StatusOr<llvm::Value*> CudaTargetHooks::EmitBinaryMath(llvm::IRBuilder<>& b, Opcode opcode, llvm::Value* lhs,
                                                       llvm::Value* rhs) const {
  switch (opcode) {
    case Opcode::kAtan2: return CallLibdevice(b, "atan2", {lhs, rhs});
    case Opcode::kPower: return CallLibdevice(b, "pow", {lhs, rhs});
    default: break;
  }
  return Unimplemented("cuda: no elementary function ", OpcodeName(opcode));
}

// The complex runtime's own function (complex_runtime.h), called with the
// values as they are: nothing here follows the host's C ABI.
llvm::Value* CudaTargetHooks::EmitComplexCall(llvm::IRBuilder<>& b, llvm_ir::ComplexCall call,
                                              const std::vector<llvm::Value*>& arguments) const {
  llvm::Function* function =
      ComplexRuntimeFunction(*b.GetInsertBlock()->getModule(), call, arguments[0]->getType());
  return b.CreateCall(function, arguments);
}

llvm::Value* CudaTargetHooks::EmitHypot(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) const {
  return CallLibdevice(b, "hypot", {x, y});
}

}  // namespace kiln::cuda
