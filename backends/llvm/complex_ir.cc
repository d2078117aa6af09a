#include "backends/llvm/complex_ir.h"

#include <string>
#include <vector>

#include <llvm/IR/Module.h>

namespace kiln::llvm_ir {
namespace {

llvm::Type* PartType(llvm::Value* z) { return z->getType()->getScalarType(); }

llvm::Value* Constant(llvm::Value* like, double real, double imag) {
  llvm::Type* part = PartType(like);
  return llvm::ConstantVector::get({llvm::ConstantFP::get(part, real), llvm::ConstantFP::get(part, imag)});
}

llvm::Value* Multiply(llvm::IRBuilder<>& b, const TargetHooks& target, llvm::Value* lhs, llvm::Value* rhs) {
  llvm::Value *a = RealPart(b, lhs), *c = RealPart(b, rhs);
  llvm::Value *d = ImagPart(b, rhs), *e = ImagPart(b, lhs);
  llvm::Value* real = b.CreateFSub(b.CreateFMul(a, c), b.CreateFMul(e, d));
  llvm::Value* imag = b.CreateFAdd(b.CreateFMul(a, d), b.CreateFMul(e, c));
  llvm::Value* naive = MakeComplex(b, real, imag);
  // Both parts NaN: recover infinities as C's Annex G asks (libgcc does it).
  llvm::Value* both_nan = b.CreateAnd(b.CreateFCmpUNO(real, real), b.CreateFCmpUNO(imag, imag));
  llvm::BasicBlock* before = b.GetInsertBlock();
  llvm::Function* function = before->getParent();
  llvm::BasicBlock* slow = llvm::BasicBlock::Create(b.getContext(), "complex.mul.nan", function);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(b.getContext(), "complex.mul.done", function);
  b.CreateCondBr(both_nan, slow, done);
  b.SetInsertPoint(slow);
  llvm::Value* careful = target.EmitComplexCall(b, ComplexCall::kMultiply, {lhs, rhs});
  llvm::BasicBlock* slow_end = b.GetInsertBlock();
  b.CreateBr(done);
  b.SetInsertPoint(done);
  llvm::PHINode* result = b.CreatePHI(naive->getType(), 2);
  result->addIncoming(naive, before);
  result->addIncoming(careful, slow_end);
  return result;
}

llvm::Value* Divide(llvm::IRBuilder<>& b, const TargetHooks& target, llvm::Value* lhs, llvm::Value* rhs) {
  return target.EmitComplexCall(b, ComplexCall::kDivide, {lhs, rhs});
}

llvm::Value* Abs(llvm::IRBuilder<>& b, const TargetHooks& target, llvm::Value* z) {
  return target.EmitHypot(b, RealPart(b, z), ImagPart(b, z));
}

llvm::Value* Exp(llvm::IRBuilder<>& b, const TargetHooks& target, llvm::Value* z) {
  return target.EmitComplexCall(b, ComplexCall::kExp, {z});
}
llvm::Value* Log(llvm::IRBuilder<>& b, const TargetHooks& target, llvm::Value* z) {
  return target.EmitComplexCall(b, ComplexCall::kLog, {z});
}
llvm::Value* Sqrt(llvm::IRBuilder<>& b, const TargetHooks& target, llvm::Value* z) {
  return target.EmitComplexCall(b, ComplexCall::kSqrt, {z});
}

}  // namespace

llvm::Value* MakeComplex(llvm::IRBuilder<>& b, llvm::Value* real, llvm::Value* imag) {
  llvm::Type* vector = llvm::FixedVectorType::get(real->getType(), 2);
  llvm::Value* z = b.CreateInsertElement(llvm::PoisonValue::get(vector), real, uint64_t{0});
  return b.CreateInsertElement(z, imag, uint64_t{1});
}

llvm::Value* RealPart(llvm::IRBuilder<>& b, llvm::Value* z) { return b.CreateExtractElement(z, uint64_t{0}); }
llvm::Value* ImagPart(llvm::IRBuilder<>& b, llvm::Value* z) { return b.CreateExtractElement(z, uint64_t{1}); }

bool ComplexUnarySupported(Opcode opcode) {
  switch (opcode) {
    case Opcode::kCopy:
    case Opcode::kAbs:
    case Opcode::kNegate:
    case Opcode::kSign: return true;
    default: return IsElementaryFunction(opcode);
  }
}

bool ComplexBinarySupported(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kDivide:
    case Opcode::kPower: return true;
    default: return false;
  }
}

StatusOr<llvm::Value*> EmitComplexUnary(llvm::IRBuilder<>& b, const TargetHooks& target, Opcode opcode,
                                        ElementType type, llvm::Value* x) {
  if (!ComplexUnarySupported(opcode)) {
    return Unimplemented("cpu codegen: ", OpcodeName(opcode), " is not defined for ", ElementTypeName(type));
  }
  llvm::Value* one = Constant(x, 1.0, 0.0);
  switch (opcode) {
    case Opcode::kCopy: return x;
    case Opcode::kAbs: return Abs(b, target, x);
    case Opcode::kNegate: return b.CreateFNeg(x);
    case Opcode::kSign: {
      // z / |z| part by part; zero stays zero.
      llvm::Value* magnitude = Abs(b, target, x);
      llvm::Value* scaled = b.CreateFDiv(x, b.CreateVectorSplat(2, magnitude));
      llvm::Value* zero = b.CreateFCmpOEQ(magnitude, llvm::ConstantFP::get(PartType(x), 0.0));
      return b.CreateSelect(zero, Constant(x, 0.0, 0.0), scaled);
    }
    case Opcode::kExp: return Exp(b, target, x);
    case Opcode::kExpm1: return b.CreateFSub(Exp(b, target, x), one);
    case Opcode::kLog: return Log(b, target, x);
    case Opcode::kLog1p: return Log(b, target, b.CreateFAdd(x, one));
    case Opcode::kLogistic: return Divide(b, target, one, b.CreateFAdd(one, Exp(b, target, b.CreateFNeg(x))));
    case Opcode::kSqrt: return Sqrt(b, target, x);
    case Opcode::kRsqrt: return Divide(b, target, one, Sqrt(b, target, x));
    case Opcode::kSin: return target.EmitComplexCall(b, ComplexCall::kSin, {x});
    case Opcode::kCos: return target.EmitComplexCall(b, ComplexCall::kCos, {x});
    case Opcode::kTan: return target.EmitComplexCall(b, ComplexCall::kTan, {x});
    case Opcode::kTanh: return target.EmitComplexCall(b, ComplexCall::kTanh, {x});
    default: break;
  }
  return Internal("cpu codegen: unhandled complex ", OpcodeName(opcode));
}

StatusOr<llvm::Value*> EmitComplexBinary(llvm::IRBuilder<>& b, const TargetHooks& target, Opcode opcode,
                                         ElementType type, llvm::Value* lhs, llvm::Value* rhs) {
  if (!ComplexBinarySupported(opcode)) {
    return Unimplemented("cpu codegen: ", OpcodeName(opcode), " is not defined for ", ElementTypeName(type));
  }
  switch (opcode) {
    case Opcode::kAdd: return b.CreateFAdd(lhs, rhs);
    case Opcode::kSubtract: return b.CreateFSub(lhs, rhs);
    case Opcode::kMultiply: return Multiply(b, target, lhs, rhs);
    case Opcode::kDivide: return Divide(b, target, lhs, rhs);
    case Opcode::kPower: {
      // 0^0 is 1, as the interpreter has it; otherwise cpow.
      llvm::Value* zero = Constant(lhs, 0.0, 0.0);
      llvm::Value* both_zero = b.CreateAnd(EmitComplexCompare(b, ComparisonDirection::kEq, lhs, zero),
                                           EmitComplexCompare(b, ComparisonDirection::kEq, rhs, zero));
      return b.CreateSelect(both_zero, Constant(lhs, 1.0, 0.0),
                            target.EmitComplexCall(b, ComplexCall::kPower, {lhs, rhs}));
    }
    default: break;
  }
  return Internal("cpu codegen: unhandled complex ", OpcodeName(opcode));
}

llvm::Value* EmitComplexCompare(llvm::IRBuilder<>& b, ComparisonDirection direction, llvm::Value* lhs,
                                llvm::Value* rhs) {
  llvm::Value* real = b.CreateFCmpOEQ(RealPart(b, lhs), RealPart(b, rhs));
  llvm::Value* imag = b.CreateFCmpOEQ(ImagPart(b, lhs), ImagPart(b, rhs));
  llvm::Value* equal = b.CreateAnd(real, imag);
  return direction == ComparisonDirection::kEq ? equal : b.CreateNot(equal);
}

}  // namespace kiln::llvm_ir
