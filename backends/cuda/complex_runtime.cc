#include "backends/cuda/complex_runtime.h"

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

namespace kiln::cuda {
namespace {

using Complex = std::pair<llvm::Value*, llvm::Value*>;  // (real, imaginary)
using Body = std::function<Complex(llvm::IRBuilder<>&, const std::vector<Complex>&)>;

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

const std::map<std::string, Body>& Bodies() {
  static const auto* bodies = new std::map<std::string, Body>{
      {"mul", [](llvm::IRBuilder<>& b, const std::vector<Complex>& z) { return Multiply(b, z[0], z[1]); }},
      {"div", [](llvm::IRBuilder<>& b, const std::vector<Complex>& z) { return Divide(b, z[0], z[1]); }},
      {"exp", [](llvm::IRBuilder<>& b, const std::vector<Complex>& z) { return Exp(b, z[0]); }},
      {"log", [](llvm::IRBuilder<>& b, const std::vector<Complex>& z) { return Log(b, z[0]); }},
      {"sqrt", [](llvm::IRBuilder<>& b, const std::vector<Complex>& z) { return Sqrt(b, z[0]); }},
      {"sin",
       [](llvm::IRBuilder<>& b, const std::vector<Complex>& z) -> Complex {
         auto [a, bi] = z[0];
         return {b.CreateFMul(Call(b, "sin", {a}), Call(b, "cosh", {bi})),
                 b.CreateFMul(Call(b, "cos", {a}), Call(b, "sinh", {bi}))};
       }},
      {"cos",
       [](llvm::IRBuilder<>& b, const std::vector<Complex>& z) -> Complex {
         auto [a, bi] = z[0];
         return {b.CreateFMul(Call(b, "cos", {a}), Call(b, "cosh", {bi})),
                 b.CreateFNeg(b.CreateFMul(Call(b, "sin", {a}), Call(b, "sinh", {bi})))};
       }},
      {"tanh", [](llvm::IRBuilder<>& b, const std::vector<Complex>& z) { return Tanh(b, z[0]); }},
      // tan(z) = -i tanh(iz).
      {"tan",
       [](llvm::IRBuilder<>& b, const std::vector<Complex>& z) -> Complex {
         Complex t = Tanh(b, {b.CreateFNeg(z[0].second), z[0].first});
         return {t.second, b.CreateFNeg(t.first)};
       }},
      {"pow", [](llvm::IRBuilder<>& b,
                 const std::vector<Complex>& z) { return Exp(b, Multiply(b, Log(b, z[0]), z[1])); }},
  };
  return *bodies;
}

// The body key and whether the arguments come as four scalars (libgcc's
// helpers) for a runtime function name, or "" when it is not one.
std::pair<std::string, bool> Classify(llvm::StringRef name) {
  static const std::map<std::string, std::pair<std::string, bool>> names = {
      {"__mulsc3", {"mul", true}}, {"__muldc3", {"mul", true}}, {"__divsc3", {"div", true}},
      {"__divdc3", {"div", true}}, {"cexpf", {"exp", false}},   {"cexp", {"exp", false}},
      {"clogf", {"log", false}},   {"clog", {"log", false}},    {"csqrtf", {"sqrt", false}},
      {"csqrt", {"sqrt", false}},  {"csinf", {"sin", false}},   {"csin", {"sin", false}},
      {"ccosf", {"cos", false}},   {"ccos", {"cos", false}},    {"ctanf", {"tan", false}},
      {"ctan", {"tan", false}},    {"ctanhf", {"tanh", false}}, {"ctanh", {"tanh", false}},
      {"cpowf", {"pow", false}},   {"cpow", {"pow", false}},
  };
  auto found = names.find(name.str());
  return found == names.end() ? std::pair<std::string, bool>{"", false} : found->second;
}

void Define(llvm::Function& function, const Body& body, bool scalar_helper) {
  llvm::LLVMContext& context = function.getContext();
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", &function));
  std::vector<Complex> arguments;
  const bool vector_abi = function.getReturnType()->isVectorTy();  // float complex
  if (vector_abi && !scalar_helper) {
    for (llvm::Argument& argument : function.args())
      arguments.push_back(
          {b.CreateExtractElement(&argument, uint64_t{0}), b.CreateExtractElement(&argument, uint64_t{1})});
  } else {
    // Parts as scalars: (re0, im0, re1, im1, ...).
    for (unsigned i = 0; i + 1 < function.arg_size(); i += 2)
      arguments.push_back({function.getArg(i), function.getArg(i + 1)});
  }
  const Complex result = body(b, arguments);
  llvm::Value* packed = llvm::PoisonValue::get(function.getReturnType());
  if (vector_abi) {
    packed = b.CreateInsertElement(packed, result.first, uint64_t{0});
    packed = b.CreateInsertElement(packed, result.second, uint64_t{1});
  } else {
    packed = b.CreateInsertValue(packed, result.first, {0});
    packed = b.CreateInsertValue(packed, result.second, {1});
  }
  b.CreateRet(packed);
  function.setLinkage(llvm::GlobalValue::InternalLinkage);
}

}  // namespace

void DefineComplexFunction(llvm::Function& function) {
  const auto [key, scalar_helper] = Classify(function.getName());
  if (!key.empty() && function.isDeclaration()) Define(function, Bodies().at(key), scalar_helper);
}

}  // namespace kiln::cuda
