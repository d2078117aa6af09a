#include "backends/cpu/codegen/cpu_target_hooks.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/TargetParser/Host.h>

#include "backends/cpu/codegen/vector_exp_ir.h"
#include "backends/llvm/complex_ir.h"
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

CpuTargetHooks::CpuTargetHooks(const llvm::Triple& triple)
    : complex_abi_(triple.getArch() == llvm::Triple::aarch64 ? ComplexAbi::kAArch64 : ComplexAbi::kX86_64) {}

CpuTargetHooks::CpuTargetHooks() {
  static const CpuTargetHooks host{llvm::Triple(llvm::sys::getProcessTriple())};
  complex_abi_ = host.complex_abi_;
}

// The C library's complex functions and libgcc's __mulXc3/__divXc3 (which
// take the four parts as scalars), called as clang lowers C's complex types:
// - x86-64 System V: a float complex travels as <2 x float> (one SSE
//   register) both ways; a double complex argument as its two doubles and a
//   double complex result as a {double, double} pair.
// - AArch64 (AAPCS64): a complex number is a homogeneous aggregate of its
//   two parts, passed as [2 x T] and returned as {T, T}, in FP registers.
llvm::Value* CpuTargetHooks::EmitComplexCall(llvm::IRBuilder<>& b, llvm_ir::ComplexCall call,
                                             const std::vector<llvm::Value*>& arguments) const {
  llvm::Module* module = b.GetInsertBlock()->getModule();
  llvm::Type* complex = arguments[0]->getType();
  llvm::Type* part = complex->getScalarType();
  const bool double_parts = part->isDoubleTy();
  const bool aarch64 = complex_abi_ == ComplexAbi::kAArch64;
  const bool scalar_parts = call == llvm_ir::ComplexCall::kMultiply ||
                            call == llvm_ir::ComplexCall::kDivide || (!aarch64 && double_parts);
  std::vector<llvm::Value*> passed;
  for (llvm::Value* argument : arguments) {
    llvm::Value* real = llvm_ir::RealPart(b, argument);
    llvm::Value* imag = llvm_ir::ImagPart(b, argument);
    if (scalar_parts) {
      passed.push_back(real);
      passed.push_back(imag);
    } else if (aarch64) {
      llvm::Value* pair = llvm::PoisonValue::get(llvm::ArrayType::get(part, 2));
      passed.push_back(b.CreateInsertValue(b.CreateInsertValue(pair, real, 0), imag, 1));
    } else {
      passed.push_back(argument);
    }
  }
  std::vector<llvm::Type*> types;
  for (llvm::Value* value : passed) types.push_back(value->getType());
  const bool pair_result = aarch64 || double_parts;
  llvm::Type* result = pair_result ? llvm::StructType::get(part, part) : complex;
  llvm::FunctionCallee callee = module->getOrInsertFunction(llvm_ir::ComplexCallCName(call, double_parts),
                                                            llvm::FunctionType::get(result, types, false));
  llvm::Value* returned = b.CreateCall(callee, passed);
  if (!pair_result) return returned;
  return llvm_ir::MakeComplex(b, b.CreateExtractValue(returned, 0), b.CreateExtractValue(returned, 1));
}

llvm::Value* CpuTargetHooks::EmitHypot(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) const {
  return CallMathFunction(b, "hypot", {x, y});
}

}  // namespace kiln::cpu::codegen
