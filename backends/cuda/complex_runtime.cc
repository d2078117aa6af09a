#include "backends/cuda/complex_runtime.h"

#include <string>
#include <utility>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

namespace kiln::cuda {
namespace {

using Complex = std::pair<llvm::Value*, llvm::Value*>;  // (real, imaginary)

// A real math function of the C library (float flavour ending in 'f'),
// later renamed to libdevice's.
llvm::Value* Call(llvm::IRBuilder<>& b, const std::string& name, std::vector<llvm::Value*> args) {
  llvm::Type* type = args[0]->getType();
  const std::string full = type->isFloatTy() ? name + "f" : name;
  std::vector<llvm::Type*> types(args.size(), type);
  llvm::FunctionCallee callee =
      b.GetInsertBlock()->getModule()->getOrInsertFunction(full, llvm::FunctionType::get(type, types, false));
  return b.CreateCall(callee, args);
}

llvm::Value* Constant(llvm::Value* like, double value) {
  return llvm::ConstantFP::get(like->getType(), value);
}

Complex Multiply(llvm::IRBuilder<>& b, Complex x, Complex y) {
  return {b.CreateFSub(b.CreateFMul(x.first, y.first), b.CreateFMul(x.second, y.second)),
          b.CreateFAdd(b.CreateFMul(x.first, y.second), b.CreateFMul(x.second, y.first))};
}

// Smith's algorithm: divides by the larger of |c| and |d| first, so that
// the intermediate products do not overflow.
Complex Divide(llvm::IRBuilder<>& b, Complex x, Complex y) {
  llvm::Value *a = x.first, *bi = x.second, *c = y.first, *d = y.second;
  llvm::Value* c_larger = b.CreateFCmpOGE(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, c),
                                          b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, d));
  llvm::Value* r1 = b.CreateFDiv(d, c);
  llvm::Value* den1 = b.CreateFAdd(c, b.CreateFMul(d, r1));
  llvm::Value* re1 = b.CreateFDiv(b.CreateFAdd(a, b.CreateFMul(bi, r1)), den1);
  llvm::Value* im1 = b.CreateFDiv(b.CreateFSub(bi, b.CreateFMul(a, r1)), den1);
  llvm::Value* r2 = b.CreateFDiv(c, d);
  llvm::Value* den2 = b.CreateFAdd(b.CreateFMul(c, r2), d);
  llvm::Value* re2 = b.CreateFDiv(b.CreateFAdd(b.CreateFMul(a, r2), bi), den2);
  llvm::Value* im2 = b.CreateFDiv(b.CreateFSub(b.CreateFMul(bi, r2), a), den2);
  return {b.CreateSelect(c_larger, re1, re2), b.CreateSelect(c_larger, im1, im2)};
}

Complex Exp(llvm::IRBuilder<>& b, Complex z) {
  llvm::Value* scale = Call(b, "exp", {z.first});
  return {b.CreateFMul(scale, Call(b, "cos", {z.second})), b.CreateFMul(scale, Call(b, "sin", {z.second}))};
}

Complex Log(llvm::IRBuilder<>& b, Complex z) {
  return {Call(b, "log", {Call(b, "hypot", {z.first, z.second})}), Call(b, "atan2", {z.second, z.first})};
}

Complex Sqrt(llvm::IRBuilder<>& b, Complex z) {
  llvm::Value *a = z.first, *bi = z.second;
  llvm::Value* magnitude = Call(b, "hypot", {a, bi});
  llvm::Value* t = b.CreateUnaryIntrinsic(
      llvm::Intrinsic::sqrt,
      b.CreateFMul(b.CreateFAdd(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a), magnitude),
                   Constant(a, 0.5)));
  llvm::Value* half_over_t = b.CreateFDiv(bi, b.CreateFMul(t, Constant(a, 2.0)));
  llvm::Value* nonnegative = b.CreateFCmpOGE(a, Constant(a, 0.0));
  llvm::Value* re =
      b.CreateSelect(nonnegative, t, b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, half_over_t));
  llvm::Value* im =
      b.CreateSelect(nonnegative, half_over_t, b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, t, bi));
  // sqrt(0 + bi) with b = 0 is (0, b), not the 0/0 above.
  llvm::Value* zero =
      b.CreateAnd(b.CreateFCmpOEQ(a, Constant(a, 0.0)), b.CreateFCmpOEQ(bi, Constant(a, 0.0)));
  return {b.CreateSelect(zero, Constant(a, 0.0), re), b.CreateSelect(zero, bi, im)};
}

Complex Tanh(llvm::IRBuilder<>& b, Complex z) {
  llvm::Value* two_a = b.CreateFMul(z.first, Constant(z.first, 2.0));
  llvm::Value* two_b = b.CreateFMul(z.second, Constant(z.first, 2.0));
  llvm::Value* denominator = b.CreateFAdd(Call(b, "cosh", {two_a}), Call(b, "cos", {two_b}));
  llvm::Value* re = b.CreateFDiv(Call(b, "sinh", {two_a}), denominator);
  llvm::Value* im = b.CreateFDiv(Call(b, "sin", {two_b}), denominator);
  // Far from the axis cosh overflows: tanh is +-1 there.
  llvm::Value* far =
      b.CreateFCmpOGT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, z.first), Constant(z.first, 20.0));
  return {b.CreateSelect(
              far, b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, Constant(z.first, 1.0), z.first), re),
          b.CreateSelect(far, b.CreateFMul(Constant(z.first, 0.0), z.second), im)};
}

// The body of `call` on the parts of its arguments.
Complex ComputeComplexCall(llvm::IRBuilder<>& b, llvm_ir::ComplexCall call, const std::vector<Complex>& z) {
  using llvm_ir::ComplexCall;
  switch (call) {
    case ComplexCall::kMultiply: return Multiply(b, z[0], z[1]);
    case ComplexCall::kDivide: return Divide(b, z[0], z[1]);
    case ComplexCall::kExp: return Exp(b, z[0]);
    case ComplexCall::kLog: return Log(b, z[0]);
    case ComplexCall::kSqrt: return Sqrt(b, z[0]);
    case ComplexCall::kSin: {
      auto [a, bi] = z[0];
      return {b.CreateFMul(Call(b, "sin", {a}), Call(b, "cosh", {bi})),
              b.CreateFMul(Call(b, "cos", {a}), Call(b, "sinh", {bi}))};
    }
    case ComplexCall::kCos: {
      auto [a, bi] = z[0];
      return {b.CreateFMul(Call(b, "cos", {a}), Call(b, "cosh", {bi})),
              b.CreateFNeg(b.CreateFMul(Call(b, "sin", {a}), Call(b, "sinh", {bi})))};
    }
    case ComplexCall::kTanh: return Tanh(b, z[0]);
    case ComplexCall::kTan: {
      // tan(z) = -i tanh(iz).
      Complex t = Tanh(b, {b.CreateFNeg(z[0].second), z[0].first});
      return {t.second, b.CreateFNeg(t.first)};
    }
    case ComplexCall::kPower: return Exp(b, Multiply(b, Log(b, z[0]), z[1]));
  }
  return z[0];
}

const char* ComplexCallKey(llvm_ir::ComplexCall call) {
  using llvm_ir::ComplexCall;
  switch (call) {
    case ComplexCall::kMultiply: return "mul";
    case ComplexCall::kDivide: return "div";
    case ComplexCall::kExp: return "exp";
    case ComplexCall::kLog: return "log";
    case ComplexCall::kSqrt: return "sqrt";
    case ComplexCall::kSin: return "sin";
    case ComplexCall::kCos: return "cos";
    case ComplexCall::kTan: return "tan";
    case ComplexCall::kTanh: return "tanh";
    case ComplexCall::kPower: return "pow";
  }
  return "";
}

}  // namespace

llvm::Function* ComplexRuntimeFunction(llvm::Module& module, llvm_ir::ComplexCall call,
                                       llvm::Type* complex_type) {
  const std::string name = std::string("kiln.complex.") + ComplexCallKey(call) +
                           (complex_type->getScalarType()->isDoubleTy() ? ".f64" : ".f32");
  if (llvm::Function* defined = module.getFunction(name)) return defined;
  const std::vector<llvm::Type*> parameters(static_cast<size_t>(llvm_ir::ComplexCallArity(call)),
                                            complex_type);
  llvm::Function* function = llvm::Function::Create(llvm::FunctionType::get(complex_type, parameters, false),
                                                    llvm::GlobalValue::InternalLinkage, name, module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(module.getContext(), "entry", function));
  std::vector<Complex> arguments;
  for (llvm::Argument& argument : function->args())
    arguments.push_back(
        {b.CreateExtractElement(&argument, uint64_t{0}), b.CreateExtractElement(&argument, uint64_t{1})});
  const Complex result = ComputeComplexCall(b, call, arguments);
  llvm::Value* packed =
      b.CreateInsertElement(llvm::PoisonValue::get(complex_type), result.first, uint64_t{0});
  b.CreateRet(b.CreateInsertElement(packed, result.second, uint64_t{1}));
  return function;
}

}  // namespace kiln::cuda
