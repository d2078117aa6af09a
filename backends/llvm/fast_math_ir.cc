#include "backends/llvm/fast_math_ir.h"

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

namespace kiln::llvm_ir {
namespace {

llvm::Value* F(llvm::IRBuilder<>& b, double value) { return llvm::ConstantFP::get(b.getFloatTy(), value); }

// Horner evaluation of c[0]*x^n + c[1]*x^(n-1) + ... + c[n], with FMAs.
// `x` is a float or a vector of floats.
llvm::Value* Polynomial(llvm::IRBuilder<>& b, llvm::Value* x, std::initializer_list<double> coefficients) {
  llvm::Type* type = x->getType();
  llvm::Value* result = nullptr;
  for (double c : coefficients) {
    llvm::Value* constant = llvm::ConstantFP::get(type, c);
    result =
        result == nullptr ? constant : b.CreateIntrinsic(llvm::Intrinsic::fma, {type}, {result, x, constant});
  }
  return result;
}

// 2^n for an integer n (or vector of them) in [-126, 127], built from the
// exponent bits.
llvm::Value* PowerOfTwo(llvm::IRBuilder<>& b, llvm::Value* n) {
  llvm::Type* type = n->getType();
  llvm::Value* bits =
      b.CreateShl(b.CreateAdd(n, llvm::ConstantInt::get(type, 127)), llvm::ConstantInt::get(type, 23));
  return b.CreateBitCast(bits, type->getWithNewType(b.getFloatTy()));
}

}  // namespace

// exp(x) = 2^n * e^r with n = round(x / ln 2), |r| <= ln2 / 2; e^r by a
// degree-6 minimax polynomial (Cephes expf coefficients).
ExpParts EmitExpParts(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* type = x->getType();
  auto constant = [type](double value) { return llvm::ConstantFP::get(type, value); };
  auto fma = [&](llvm::Value* p, llvm::Value* q, llvm::Value* r) {
    return b.CreateIntrinsic(llvm::Intrinsic::fma, {type}, {p, q, r});
  };
  // NaN passes both clamps (the comparisons are false for it).
  llvm::Value* clamped = b.CreateSelect(b.CreateFCmpOGT(x, constant(88.8)), constant(88.8), x);
  clamped = b.CreateSelect(b.CreateFCmpOLT(clamped, constant(-104.0)), constant(-104.0), clamped);
  llvm::Value* n = b.CreateIntrinsic(llvm::Intrinsic::roundeven, {type},
                                     {b.CreateFMul(clamped, constant(1.44269504088896341))});
  // r = x - n * ln2, with ln2 split in two so the product is exact.
  llvm::Value* r = fma(n, constant(-0.693359375), clamped);
  r = fma(n, constant(2.12194440e-4), r);
  llvm::Value* p = Polynomial(
      b, r,
      {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3, 4.1665795894E-2, 1.6666665459E-1, 5.0000001201E-1});
  llvm::Value* er = b.CreateFAdd(fma(p, b.CreateFMul(r, r), r), constant(1.0));
  return {n, er};
}

// 2^n is applied in two halves so that results down to the smallest
// subnormal are right.
llvm::Value* EmitFastExp(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* type = x->getType();
  auto constant = [type](double value) { return llvm::ConstantFP::get(type, value); };
  const auto [n, er] = EmitExpParts(b, x);
  llvm::Value* ni = b.CreateFPToSI(n, type->getWithNewType(b.getInt32Ty()));
  llvm::Value* half_n = b.CreateAShr(ni, 1);
  llvm::Value* result =
      b.CreateFMul(b.CreateFMul(er, PowerOfTwo(b, half_n)), PowerOfTwo(b, b.CreateSub(ni, half_n)));
  result = b.CreateSelect(b.CreateFCmpOGT(x, constant(88.72283905206835)),
                          constant(std::numeric_limits<float>::infinity()), result);
  // fptosi of NaN is poison: the select keeps it out of the result.
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
}

// log(x) = e * ln2 + log(m), m in [sqrt(1/2), sqrt(2)), log(1 + f) by the
// Cephes logf polynomial. Subnormals are scaled by 2^23 first.
llvm::Value* EmitFastLog(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Value* subnormal = b.CreateFCmpOLT(x, F(b, 1.17549435e-38));
  llvm::Value* scaled = b.CreateSelect(subnormal, b.CreateFMul(x, F(b, 8388608.0)), x);
  llvm::Value* bits = b.CreateBitCast(scaled, i32);
  llvm::Value* exponent = b.CreateSub(b.CreateLShr(bits, 23), b.getInt32(126));
  exponent = b.CreateSelect(subnormal, b.CreateSub(exponent, b.getInt32(23)), exponent);
  // Mantissa in [0.5, 1).
  llvm::Value* m = b.CreateBitCast(b.CreateOr(b.CreateAnd(bits, 0x007FFFFF), 0x3F000000), b.getFloatTy());
  llvm::Value* small = b.CreateFCmpOLT(m, F(b, 0.707106781186547524));
  exponent = b.CreateSelect(small, b.CreateSub(exponent, b.getInt32(1)), exponent);
  llvm::Value* f = b.CreateFSub(b.CreateSelect(small, b.CreateFAdd(m, m), m), F(b, 1.0));
  llvm::Value* e = b.CreateSIToFP(exponent, b.getFloatTy());
  llvm::Value* z = b.CreateFMul(f, f);
  llvm::Value* p =
      Polynomial(b, f,
                 {7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
                  -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1});
  llvm::Value* y = b.CreateFMul(b.CreateFMul(f, z), p);
  y = b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {e, F(b, -2.12194440e-4), y});
  y = b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {z, F(b, -0.5), y});
  llvm::Value* result = b.CreateFAdd(f, y);
  result = b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {e, F(b, 0.693359375), result});
  const double inf = std::numeric_limits<float>::infinity();
  result = b.CreateSelect(b.CreateFCmpOEQ(x, F(b, inf)), x, result);
  result = b.CreateSelect(b.CreateFCmpOEQ(x, F(b, 0.0)), F(b, -inf), result);
  // Negative inputs and NaN give NaN.
  return b.CreateSelect(b.CreateFCmpULT(x, F(b, 0.0)), F(b, std::numeric_limits<float>::quiet_NaN()), result);
}

// log1p(x) = log(u) * x / (u - 1) with u = 1 + x rounded: the ratio
// x / (u - 1) undoes the rounding of u to first order, so the result keeps
// EmitFastLog's few-ulp accuracy near 0, where log(1 + x) alone would lose
// all of x's low bits (a classic identity, Goldberg 1991). Where u rounds
// to 1 the answer is x itself; where u is +inf (x = +inf) it is x; x = -1
// gives -inf and x < -1 or NaN give NaN through the log.
llvm::Value* EmitFastLog1p(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Value* u = b.CreateFAdd(x, F(b, 1.0));
  llvm::Value* log_u = EmitFastLog(b, u);
  llvm::Value* corrected = b.CreateFMul(log_u, b.CreateFDiv(x, b.CreateFSub(u, F(b, 1.0))));
  llvm::Value* exact = b.CreateOr(b.CreateFCmpOEQ(u, F(b, 1.0)), b.CreateFCmpOEQ(log_u, u));
  return b.CreateSelect(exact, x, corrected);
}

// tanh by a 13/6 rational approximation on [-7.9, 7.9] (beyond, tanh rounds
// to +-1 in float); tiny inputs return themselves.
llvm::Value* EmitFastTanh(llvm::IRBuilder<>& b, llvm::Value* x) {
  const double bound = 7.90531110763549805;
  llvm::Value* clamped = b.CreateSelect(b.CreateFCmpOGT(x, F(b, bound)), F(b, bound), x);
  clamped = b.CreateSelect(b.CreateFCmpOLT(clamped, F(b, -bound)), F(b, -bound), clamped);
  llvm::Value* x2 = b.CreateFMul(clamped, clamped);
  llvm::Value* p =
      Polynomial(b, x2,
                 {-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11, 5.12229709037114e-08,
                  1.48572235717979e-05, 6.37261928875436e-04, 4.89352455891786e-03});
  p = b.CreateFMul(clamped, p);
  llvm::Value* q = Polynomial(
      b, x2, {1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03, 4.89352518554385e-03});
  llvm::Value* result = b.CreateFDiv(p, q);
  llvm::Value* abs = b.CreateIntrinsic(llvm::Intrinsic::fabs, {b.getFloatTy()}, {x});
  return b.CreateSelect(b.CreateFCmpOLT(abs, F(b, 0.0004)), x, result);
}

// erf by a 13/8 rational approximation on [-4, 4]; beyond, erf is +-1.
llvm::Value* EmitFastErf(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Value* clamped = b.CreateSelect(b.CreateFCmpOGT(x, F(b, 4.0)), F(b, 4.0), x);
  clamped = b.CreateSelect(b.CreateFCmpOLT(clamped, F(b, -4.0)), F(b, -4.0), clamped);
  llvm::Value* x2 = b.CreateFMul(clamped, clamped);
  llvm::Value* p =
      Polynomial(b, x2,
                 {-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
                  -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02});
  p = b.CreateFMul(clamped, p);
  llvm::Value* q = Polynomial(b, x2,
                              {-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
                               -7.37332916720468e-03, -1.42647390514189e-02});
  return b.CreateFDiv(p, q);
}

}  // namespace kiln::llvm_ir
