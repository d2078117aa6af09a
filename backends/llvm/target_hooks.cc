#include "backends/llvm/target_hooks.h"

#include <vector>

namespace kiln::llvm_ir {

llvm::Value* TargetHooks::EmitFloatMinMax(llvm::IRBuilder<>& b, bool maximum, llvm::Value* lhs,
                                          llvm::Value* rhs) const {
  // llvm.maximum/minimum propagate NaN. No-signed-zeros: ordering the zeros
  // costs three more AVX-512 instructions per vector, half of a max
  // reduction's loop, and XLA and the interpreter leave it open too.
  llvm::FastMathFlags flags;
  flags.setNoSignedZeros();
  llvm::CallInst* call = b.CreateIntrinsic(maximum ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum,
                                           {lhs->getType()}, {lhs, rhs});
  call->setFastMathFlags(flags);
  return call;
}

const char* ComplexCallCName(ComplexCall call, bool double_parts) {
  switch (call) {
    case ComplexCall::kMultiply: return double_parts ? "__muldc3" : "__mulsc3";
    case ComplexCall::kDivide: return double_parts ? "__divdc3" : "__divsc3";
    case ComplexCall::kExp: return double_parts ? "cexp" : "cexpf";
    case ComplexCall::kLog: return double_parts ? "clog" : "clogf";
    case ComplexCall::kSqrt: return double_parts ? "csqrt" : "csqrtf";
    case ComplexCall::kSin: return double_parts ? "csin" : "csinf";
    case ComplexCall::kCos: return double_parts ? "ccos" : "ccosf";
    case ComplexCall::kTan: return double_parts ? "ctan" : "ctanf";
    case ComplexCall::kTanh: return double_parts ? "ctanh" : "ctanhf";
    case ComplexCall::kPower: return double_parts ? "cpow" : "cpowf";
  }
  return "";
}

int ComplexCallArity(ComplexCall call) {
  return call == ComplexCall::kMultiply || call == ComplexCall::kDivide || call == ComplexCall::kPower ? 2
                                                                                                       : 1;
}

llvm::Value* CallMathFunction(llvm::IRBuilder<>& b, const std::string& name,
                              std::initializer_list<llvm::Value*> args) {
  llvm::Type* type = (*args.begin())->getType();
  const std::string full_name = type->isFloatTy() ? name + "f" : name;
  std::vector<llvm::Type*> params(args.size(), type);
  llvm::Module* module = b.GetInsertBlock()->getModule();
  llvm::FunctionCallee callee =
      module->getOrInsertFunction(full_name, llvm::FunctionType::get(type, params, false));
  if (auto* function = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    function->setDoesNotThrow();
    function->setDoesNotAccessMemory();
    function->setWillReturn();
  }
  return b.CreateCall(callee, args);
}

llvm::Value* CallIntrinsic(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id,
                           std::initializer_list<llvm::Value*> args) {
  return b.CreateIntrinsic(id, {(*args.begin())->getType()}, std::vector<llvm::Value*>(args));
}

}  // namespace kiln::llvm_ir
