#include "backends/llvm/complex_ir.h"

#include <string>
#include <vector>

#include <llvm/IR/Module.h>

namespace kiln::llvm_ir {
namespace {

bool IsDouble(llvm::Value* z) { return z->getType()->getScalarType()->isDoubleTy(); }

llvm::Type* PartType(llvm::Value* z) { return z->getType()->getScalarType(); }

// Calls a C function taking and returning complex numbers, in the x86-64
// System V lowering clang uses: a float complex travels as <2 x float>; a
// double complex as two doubles in, a {double, double} pair out.
llvm::Value* CallComplex(llvm::IRBuilder<>& b, const TargetHooks& target, const std::string& float_name,
                         const std::string& double_name, const std::vector<llvm::Value*>& arguments) {
  llvm::Module* module = b.GetInsertBlock()->getModule();
  const bool is_double = IsDouble(arguments[0]);
  if (!is_double) {
    std::vector<llvm::Type*> types(arguments.size(), arguments[0]->getType());
    llvm::FunctionCallee callee = target.ComplexFunction(
        *module, float_name, llvm::FunctionType::get(arguments[0]->getType(), types, false));
    return b.CreateCall(callee, arguments);
  }
  llvm::Type* part = b.getDoubleTy();
  std::vector<llvm::Value*> parts;
  for (llvm::Value* argument : arguments) {
    parts.push_back(RealPart(b, argument));
    parts.push_back(ImagPart(b, argument));
  }
  llvm::StructType* pair = llvm::StructType::get(part, part);
  std::vector<llvm::Type*> types(parts.size(), part);
  llvm::FunctionCallee callee =
      target.ComplexFunction(*module, double_name, llvm::FunctionType::get(pair, types, false));
  llvm::Value* result = b.CreateCall(callee, parts);
  return MakeComplex(b, b.CreateExtractValue(result, 0), b.CreateExtractValue(result, 1));
}

// libgcc's __mulsc3 / __divsc3 take the four parts as scalars.
llvm::Value* CallComplexHelper(llvm::IRBuilder<>& b, const TargetHooks& target, const std::string& float_name,
                               const std::string& double_name, llvm::Value* lhs, llvm::Value* rhs) {
  llvm::Module* module = b.GetInsertBlock()->getModule();
  llvm::Type* part = PartType(lhs);
  const std::vector<llvm::Value*> parts = {RealPart(b, lhs), ImagPart(b, lhs), RealPart(b, rhs),
                                           ImagPart(b, rhs)};
  const std::vector<llvm::Type*> types(4, part);
  if (!IsDouble(lhs)) {
    llvm::FunctionCallee callee =
        target.ComplexFunction(*module, float_name, llvm::FunctionType::get(lhs->getType(), types, false));
    return b.CreateCall(callee, parts);
  }
  llvm::StructType* pair = llvm::StructType::get(part, part);
  llvm::FunctionCallee callee =
      target.ComplexFunction(*module, double_name, llvm::FunctionType::get(pair, types, false));
  llvm::Value* result = b.CreateCall(callee, parts);
  return MakeComplex(b, b.CreateExtractValue(result, 0), b.CreateExtractValue(result, 1));
}

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
  llvm::Value* careful = CallComplexHelper(b, target, "__mulsc3", "__muldc3", lhs, rhs);
  llvm::BasicBlock* slow_end = b.GetInsertBlock();
  b.CreateBr(done);
  b.SetInsertPoint(done);
  llvm::PHINode* result = b.CreatePHI(naive->getType(), 2);
  result->addIncoming(naive, before);
  result->addIncoming(careful, slow_end);
  return result;
}

llvm::Value* Divide(llvm::IRBuilder<>& b, const TargetHooks& target, llvm::Value* lhs, llvm::Value* rhs) {
  return CallComplexHelper(b, target, "__divsc3", "__divdc3", lhs, rhs);
}

llvm::Value* Abs(llvm::IRBuilder<>& b, const TargetHooks& target, llvm::Value* z) {
  llvm::Module* module = b.GetInsertBlock()->getModule();
  llvm::Type* part = PartType(z);
  const std::string name = IsDouble(z) ? "hypot" : "hypotf";
  llvm::FunctionCallee callee =
      target.ComplexFunction(*module, name, llvm::FunctionType::get(part, {part, part}, false));
  return b.CreateCall(callee, {RealPart(b, z), ImagPart(b, z)});
}

llvm::Value* Exp(llvm::IRBuilder<>& b, const TargetHooks& target, llvm::Value* z) {
  return CallComplex(b, target, "cexpf", "cexp", {z});
}
llvm::Value* Log(llvm::IRBuilder<>& b, const TargetHooks& target, llvm::Value* z) {
  return CallComplex(b, target, "clogf", "clog", {z});
}
llvm::Value* Sqrt(llvm::IRBuilder<>& b, const TargetHooks& target, llvm::Value* z) {
  return CallComplex(b, target, "csqrtf", "csqrt", {z});
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
    case Opcode::kSin: return CallComplex(b, target, "csinf", "csin", {x});
    case Opcode::kCos: return CallComplex(b, target, "ccosf", "ccos", {x});
    case Opcode::kTan: return CallComplex(b, target, "ctanf", "ctan", {x});
    case Opcode::kTanh: return CallComplex(b, target, "ctanhf", "ctanh", {x});
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
                            CallComplex(b, target, "cpowf", "cpow", {lhs, rhs}));
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
