#include "backends/cpu/codegen/cpu_target_hooks.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "backends/cpu/codegen/vector_exp_ir.h"
#include "backends/llvm/fast_math_ir.h"

namespace kiln::cpu::codegen {

using llvm_ir::CallIntrinsic;
using llvm_ir::CallMathFunction;

StatusOr<llvm::Value*> CpuTargetHooks::EmitUnaryMath(llvm::IRBuilder<>& b, Opcode opcode,
                                                     llvm::Value* x) const {
  llvm::Type* t = x->getType();
  const bool fast = t->isFloatTy();
  switch (opcode) {
    case Opcode::kCbrt: return CallMathFunction(b, "cbrt", {x});
    case Opcode::kErf: return fast ? llvm_ir::EmitFastErf(b, x) : CallMathFunction(b, "erf", {x});
    case Opcode::kExp: return fast ? EmitVectorizableExp(b, x) : CallIntrinsic(b, llvm::Intrinsic::exp, {x});
    case Opcode::kExpm1: return CallMathFunction(b, "expm1", {x});
    case Opcode::kLog: return fast ? llvm_ir::EmitFastLog(b, x) : CallIntrinsic(b, llvm::Intrinsic::log, {x});
    case Opcode::kLog1p: return fast ? llvm_ir::EmitFastLog1p(b, x) : CallMathFunction(b, "log1p", {x});
    case Opcode::kLogistic: {
      // 1 / (1 + exp(-x)), the interpreter's formula.
      llvm::Value* e = fast ? EmitVectorizableExp(b, b.CreateFNeg(x))
                            : CallIntrinsic(b, llvm::Intrinsic::exp, {b.CreateFNeg(x)});
      llvm::Value* one = llvm::ConstantFP::get(t, 1.0);
      return b.CreateFDiv(one, b.CreateFAdd(one, e));
    }
    case Opcode::kSin: return CallIntrinsic(b, llvm::Intrinsic::sin, {x});
    case Opcode::kCos: return CallIntrinsic(b, llvm::Intrinsic::cos, {x});
    case Opcode::kTan: return CallMathFunction(b, "tan", {x});
    case Opcode::kTanh: return fast ? llvm_ir::EmitFastTanh(b, x) : CallMathFunction(b, "tanh", {x});
    default: break;
  }
  return Unimplemented("cpu codegen: no elementary function ", OpcodeName(opcode));
}

StatusOr<llvm::Value*> CpuTargetHooks::EmitBinaryMath(llvm::IRBuilder<>& b, Opcode opcode, llvm::Value* lhs,
                                                      llvm::Value* rhs) const {
  switch (opcode) {
    case Opcode::kAtan2: return CallMathFunction(b, "atan2", {lhs, rhs});
    case Opcode::kPower: return CallIntrinsic(b, llvm::Intrinsic::pow, {lhs, rhs});
    default: break;
  }
  return Unimplemented("cpu codegen: no elementary function ", OpcodeName(opcode));
}

llvm::FunctionCallee CpuTargetHooks::ComplexFunction(llvm::Module& module, const std::string& name,
                                                     llvm::FunctionType* type) const {
  return module.getOrInsertFunction(name, type);
}

}  // namespace kiln::cpu::codegen
