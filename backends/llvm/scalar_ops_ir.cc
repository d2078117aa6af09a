#include "backends/llvm/scalar_ops_ir.h"

#include <limits>
#include <string>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include "backends/llvm/complex_ir.h"
#include "backends/llvm/element_ir.h"
#include "backends/llvm/target_hooks.h"

namespace kiln::llvm_ir {
namespace {

bool IsPred(ElementType type) { return type == ElementType::kPred; }

llvm::Value* Int(llvm::Type* type, uint64_t value) { return llvm::ConstantInt::get(type, value); }

llvm::Value* FloatConst(llvm::Type* type, double value) { return llvm::ConstantFP::get(type, value); }

llvm::Value* IsNan(llvm::IRBuilder<>& b, llvm::Value* x) { return b.CreateFCmpUNO(x, x); }

// Integer power by squaring with wrap-around, as a small loop; a negative
// exponent gives 0 except for base 1.
llvm::Value* EmitIntegerPower(llvm::IRBuilder<>& b, ElementType type, llvm::Value* base,
                              llvm::Value* exponent) {
  llvm::Type* t = base->getType();
  llvm::Function* function = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* entry = b.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(b.getContext(), "ipow.loop", function);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(b.getContext(), "ipow.exit", function);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  llvm::PHINode* result = b.CreatePHI(t, 2);
  llvm::PHINode* square = b.CreatePHI(t, 2);
  llvm::PHINode* rest = b.CreatePHI(t, 2);
  result->addIncoming(Int(t, 1), entry);
  square->addIncoming(base, entry);
  rest->addIncoming(exponent, entry);
  llvm::Value* bit = b.CreateICmpNE(b.CreateAnd(rest, Int(t, 1)), Int(t, 0));
  llvm::Value* next_result = b.CreateSelect(bit, b.CreateMul(result, square), result);
  llvm::Value* next_square = b.CreateMul(square, square);
  llvm::Value* next_rest = b.CreateLShr(rest, Int(t, 1));
  result->addIncoming(next_result, loop);
  square->addIncoming(next_square, loop);
  rest->addIncoming(next_rest, loop);
  b.CreateCondBr(b.CreateICmpNE(next_rest, Int(t, 0)), loop, exit);
  b.SetInsertPoint(exit);
  llvm::PHINode* power = b.CreatePHI(t, 1);
  power->addIncoming(next_result, loop);
  llvm::Value* value = power;
  if (IsSignedIntegral(type)) value = b.CreateSelect(b.CreateICmpSLT(exponent, Int(t, 0)), Int(t, 0), value);
  llvm::Value* one = b.CreateOr(b.CreateICmpEQ(base, Int(t, 1)), b.CreateICmpEQ(exponent, Int(t, 0)));
  return b.CreateSelect(one, Int(t, 1), value);
}

llvm::Value* EmitIntegerDivide(llvm::IRBuilder<>& b, ElementType type, llvm::Value* a, llvm::Value* d,
                               bool remainder) {
  llvm::Type* t = a->getType();
  const unsigned bits = t->getIntegerBitWidth();
  llvm::Value* zero = b.CreateICmpEQ(d, Int(t, 0));
  llvm::Value* overflow = b.getFalse();
  if (IsSignedIntegral(type)) {
    overflow = b.CreateAnd(b.CreateICmpEQ(a, llvm::ConstantInt::get(t, llvm::APInt::getSignedMinValue(bits))),
                           b.CreateICmpEQ(d, llvm::ConstantInt::getSigned(t, -1)));
  }
  llvm::Value* safe = b.CreateSelect(b.CreateOr(zero, overflow), Int(t, 1), d);
  const bool is_signed = IsSignedIntegral(type);
  if (remainder) {
    llvm::Value* r = is_signed ? b.CreateSRem(a, safe) : b.CreateURem(a, safe);
    return b.CreateSelect(zero, a, b.CreateSelect(overflow, Int(t, 0), r));
  }
  llvm::Value* q = is_signed ? b.CreateSDiv(a, safe) : b.CreateUDiv(a, safe);
  return b.CreateSelect(zero, llvm::ConstantInt::getSigned(t, -1), b.CreateSelect(overflow, a, q));
}

// Shifts by an amount read as unsigned; amounts >= the width shift out all.
llvm::Value* EmitShift(llvm::IRBuilder<>& b, Opcode opcode, llvm::Value* a, llvm::Value* amount) {
  llvm::Type* t = a->getType();
  const unsigned bits = t->getIntegerBitWidth();
  llvm::Value* out_of_range = b.CreateICmpUGE(amount, Int(t, bits));
  llvm::Value* safe = b.CreateSelect(out_of_range, Int(t, 0), amount);
  switch (opcode) {
    case Opcode::kShiftLeft: return b.CreateSelect(out_of_range, Int(t, 0), b.CreateShl(a, safe));
    case Opcode::kShiftRightLogical: return b.CreateSelect(out_of_range, Int(t, 0), b.CreateLShr(a, safe));
    default: return b.CreateAShr(a, b.CreateSelect(out_of_range, Int(t, bits - 1), amount));
  }
}

// Round half to even that keeps the sign of zero (-0.4 -> -0).
llvm::Value* EmitRoundEven(llvm::IRBuilder<>& b, llvm::Value* x) {
  return CallIntrinsic(b, llvm::Intrinsic::roundeven, {x});
}

}  // namespace

bool UnaryOpSupported(Opcode opcode, ElementType type) {
  if (IsComplex(type)) return ComplexUnarySupported(opcode);
  const bool pred = IsPred(type), integer = IsIntegral(type), floating = IsFloating(type);
  if (IsElementaryFunction(opcode)) return floating;
  switch (opcode) {
    case Opcode::kCopy: return pred || integer || floating;
    case Opcode::kAbs:
    case Opcode::kNegate:
    case Opcode::kSign: return integer || floating;
    case Opcode::kFloor:
    case Opcode::kCeil:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kCbrt:
    case Opcode::kErf: return floating;
    case Opcode::kNot: return pred || integer;
    case Opcode::kClz:
    case Opcode::kPopcnt: return integer;
    default: return false;
  }
}

bool BinaryOpSupported(Opcode opcode, ElementType type) {
  if (IsComplex(type)) return ComplexBinarySupported(opcode);
  const bool pred = IsPred(type), integer = IsIntegral(type), floating = IsFloating(type);
  switch (opcode) {
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kDivide:
    case Opcode::kPower:
    case Opcode::kRemainder: return integer || floating;
    case Opcode::kMaximum:
    case Opcode::kMinimum: return pred || integer || floating;
    case Opcode::kAtan2: return floating;
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor: return pred || integer;
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightLogical:
    case Opcode::kShiftRightArithmetic: return integer;
    default: return false;
  }
}

llvm::Value* EmitMaximum(llvm::IRBuilder<>& b, const TargetHooks& target, ElementType type, llvm::Value* lhs,
                         llvm::Value* rhs) {
  if (IsFloating(type)) return target.EmitFloatMinMax(b, /*maximum=*/true, lhs, rhs);
  if (IsSignedIntegral(type)) return CallIntrinsic(b, llvm::Intrinsic::smax, {lhs, rhs});
  return CallIntrinsic(b, llvm::Intrinsic::umax, {lhs, rhs});
}

llvm::Value* EmitMinimum(llvm::IRBuilder<>& b, const TargetHooks& target, ElementType type, llvm::Value* lhs,
                         llvm::Value* rhs) {
  if (IsFloating(type)) return target.EmitFloatMinMax(b, /*maximum=*/false, lhs, rhs);
  if (IsSignedIntegral(type)) return CallIntrinsic(b, llvm::Intrinsic::smin, {lhs, rhs});
  return CallIntrinsic(b, llvm::Intrinsic::umin, {lhs, rhs});
}

StatusOr<llvm::Value*> EmitUnaryOp(llvm::IRBuilder<>& b, const TargetHooks& target, Opcode opcode,
                                   ElementType type, llvm::Value* x) {
  if (!UnaryOpSupported(opcode, type)) {
    return Unimplemented("cpu codegen: ", OpcodeName(opcode), " is not defined for ", ElementTypeName(type));
  }
  if (IsComplex(type)) return EmitComplexUnary(b, target, opcode, type, x);
  llvm::Type* t = x->getType();
  if (opcode == Opcode::kCopy) return x;
  if (IsPred(type)) return b.CreateNot(x);  // only `not` applies
  if (IsIntegral(type)) {
    switch (opcode) {
      case Opcode::kAbs:
        return IsSignedIntegral(type) ? CallIntrinsic(b, llvm::Intrinsic::abs, {x, b.getFalse()}) : x;
      case Opcode::kNegate: return b.CreateSub(Int(t, 0), x);
      case Opcode::kSign:
        if (IsSignedIntegral(type)) {
          return b.CreateSub(b.CreateZExt(b.CreateICmpSGT(x, Int(t, 0)), t),
                             b.CreateZExt(b.CreateICmpSLT(x, Int(t, 0)), t));
        }
        return b.CreateZExt(b.CreateICmpNE(x, Int(t, 0)), t);
      case Opcode::kNot: return b.CreateNot(x);
      case Opcode::kClz: return CallIntrinsic(b, llvm::Intrinsic::ctlz, {x, b.getFalse()});
      case Opcode::kPopcnt: return CallIntrinsic(b, llvm::Intrinsic::ctpop, {x});
      default: break;
    }
    return Internal("cpu codegen: unhandled integer ", OpcodeName(opcode));
  }
  // Floats: F16/BF16 are computed in float and rounded back.
  llvm::Value* result = nullptr;
  switch (opcode) {
    case Opcode::kAbs: result = CallIntrinsic(b, llvm::Intrinsic::fabs, {x}); break;
    case Opcode::kNegate: result = b.CreateFNeg(x); break;
    case Opcode::kSign: {
      llvm::Value* keep = b.CreateOr(IsNan(b, x), b.CreateFCmpOEQ(x, FloatConst(t, 0.0)));
      result = b.CreateSelect(keep, x, CallIntrinsic(b, llvm::Intrinsic::copysign, {FloatConst(t, 1.0), x}));
      break;
    }
    case Opcode::kFloor: result = CallIntrinsic(b, llvm::Intrinsic::floor, {x}); break;
    case Opcode::kCeil: result = CallIntrinsic(b, llvm::Intrinsic::ceil, {x}); break;
    case Opcode::kRoundNearestAfz: result = CallIntrinsic(b, llvm::Intrinsic::round, {x}); break;
    case Opcode::kRoundNearestEven: result = EmitRoundEven(b, x); break;
    case Opcode::kSqrt: result = CallIntrinsic(b, llvm::Intrinsic::sqrt, {x}); break;
    case Opcode::kRsqrt:
      result = b.CreateFDiv(FloatConst(t, 1.0), CallIntrinsic(b, llvm::Intrinsic::sqrt, {x}));
      break;
    case Opcode::kCbrt:
    case Opcode::kErf:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kSin:
    case Opcode::kCos:
    case Opcode::kTan:
    case Opcode::kTanh: {
      KILN_ASSIGN_OR_RETURN(result, target.EmitUnaryMath(b, opcode, x));
      break;
    }
    default: return Internal("cpu codegen: unhandled float ", OpcodeName(opcode));
  }
  return RoundToType(b, type, result);
}

StatusOr<llvm::Value*> EmitBinaryOp(llvm::IRBuilder<>& b, const TargetHooks& target, Opcode opcode,
                                    ElementType type, llvm::Value* lhs, llvm::Value* rhs) {
  if (!BinaryOpSupported(opcode, type)) {
    return Unimplemented("cpu codegen: ", OpcodeName(opcode), " is not defined for ", ElementTypeName(type));
  }
  if (IsComplex(type)) return EmitComplexBinary(b, target, opcode, type, lhs, rhs);
  if (IsPred(type)) {
    switch (opcode) {
      case Opcode::kAnd:
      case Opcode::kMinimum: return b.CreateAnd(lhs, rhs);
      case Opcode::kOr:
      case Opcode::kMaximum: return b.CreateOr(lhs, rhs);
      default: return b.CreateXor(lhs, rhs);
    }
  }
  if (IsIntegral(type)) {
    switch (opcode) {
      case Opcode::kAdd: return b.CreateAdd(lhs, rhs);
      case Opcode::kSubtract: return b.CreateSub(lhs, rhs);
      case Opcode::kMultiply: return b.CreateMul(lhs, rhs);
      case Opcode::kDivide: return EmitIntegerDivide(b, type, lhs, rhs, false);
      case Opcode::kRemainder: return EmitIntegerDivide(b, type, lhs, rhs, true);
      case Opcode::kPower: return EmitIntegerPower(b, type, lhs, rhs);
      case Opcode::kMaximum: return EmitMaximum(b, target, type, lhs, rhs);
      case Opcode::kMinimum: return EmitMinimum(b, target, type, lhs, rhs);
      case Opcode::kAnd: return b.CreateAnd(lhs, rhs);
      case Opcode::kOr: return b.CreateOr(lhs, rhs);
      case Opcode::kXor: return b.CreateXor(lhs, rhs);
      case Opcode::kShiftLeft:
      case Opcode::kShiftRightLogical:
      case Opcode::kShiftRightArithmetic: return EmitShift(b, opcode, lhs, rhs);
      default: break;
    }
    return Internal("cpu codegen: unhandled integer ", OpcodeName(opcode));
  }
  llvm::Value* result = nullptr;
  switch (opcode) {
    case Opcode::kAdd: result = b.CreateFAdd(lhs, rhs); break;
    case Opcode::kSubtract: result = b.CreateFSub(lhs, rhs); break;
    case Opcode::kMultiply: result = b.CreateFMul(lhs, rhs); break;
    case Opcode::kDivide: result = b.CreateFDiv(lhs, rhs); break;
    case Opcode::kRemainder: result = b.CreateFRem(lhs, rhs); break;
    case Opcode::kPower:
    case Opcode::kAtan2: {
      KILN_ASSIGN_OR_RETURN(result, target.EmitBinaryMath(b, opcode, lhs, rhs));
      break;
    }
    case Opcode::kMaximum: result = EmitMaximum(b, target, type, lhs, rhs); break;
    case Opcode::kMinimum: result = EmitMinimum(b, target, type, lhs, rhs); break;
    default: return Internal("cpu codegen: unhandled float ", OpcodeName(opcode));
  }
  return RoundToType(b, type, result);
}

llvm::Value* EmitCompare(llvm::IRBuilder<>& b, ComparisonDirection direction, ComparisonType comparison,
                         ElementType type, llvm::Value* lhs, llvm::Value* rhs) {
  using P = llvm::CmpInst::Predicate;
  if (IsComplex(type)) return EmitComplexCompare(b, direction, lhs, rhs);
  if (IsFloating(type) && comparison == ComparisonType::kTotalOrder) {
    // -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN: flip the magnitude
    // bits of negative values and compare as signed integers. F16/BF16 are
    // exact in float, so their float bits order the same way.
    auto key = [&](llvm::Value* x) {
      llvm::Type* int_type = b.getIntNTy(x->getType()->getPrimitiveSizeInBits().getFixedValue());
      llvm::Value* bits = b.CreateBitCast(x, int_type);
      const unsigned width = int_type->getIntegerBitWidth();
      llvm::Value* sign_fill = b.CreateAShr(bits, Int(int_type, width - 1));
      return b.CreateXor(bits, b.CreateLShr(sign_fill, Int(int_type, 1)));
    };
    lhs = key(lhs);
    rhs = key(rhs);
    type = ElementType::kS64;  // any signed integer type
  }
  if (IsFloating(type)) {
    static constexpr P kFloat[] = {P::FCMP_OEQ, P::FCMP_UNE, P::FCMP_OGE,
                                   P::FCMP_OGT, P::FCMP_OLE, P::FCMP_OLT};
    return b.CreateFCmp(kFloat[static_cast<int>(direction)], lhs, rhs);
  }
  static constexpr P kSigned[] = {P::ICMP_EQ, P::ICMP_NE, P::ICMP_SGE, P::ICMP_SGT, P::ICMP_SLE, P::ICMP_SLT};
  static constexpr P kUnsigned[] = {P::ICMP_EQ,  P::ICMP_NE,  P::ICMP_UGE,
                                    P::ICMP_UGT, P::ICMP_ULE, P::ICMP_ULT};
  const bool is_signed = IsSignedIntegral(type);
  return b.CreateICmp((is_signed ? kSigned : kUnsigned)[static_cast<int>(direction)], lhs, rhs);
}

llvm::Value* EmitConvert(llvm::IRBuilder<>& b, ElementType from, ElementType to, llvm::Value* x) {
  if (from == to) return x;
  llvm::Type* target = ComputeType(b.getContext(), to);
  if (IsComplex(to)) {
    // Complex to complex part by part; a real value becomes the real part.
    const ElementType part = ComplexComponentType(to);
    if (IsComplex(from))
      return from == ElementType::kC64 ? b.CreateFPExt(x, target) : b.CreateFPTrunc(x, target);
    llvm::Value* real = EmitConvert(b, from, part, x);
    return MakeComplex(b, real, llvm::ConstantFP::get(real->getType(), 0.0));
  }
  if (IsComplex(from)) {
    const ElementType part = ComplexComponentType(from);
    if (to == ElementType::kPred) {
      return b.CreateOr(EmitConvert(b, part, to, RealPart(b, x)), EmitConvert(b, part, to, ImagPart(b, x)));
    }
    // To a real type: the real part, as the interpreter converts.
    return EmitConvert(b, part, to, RealPart(b, x));
  }
  if (to == ElementType::kPred) {
    if (IsFloating(from)) return b.CreateFCmpUNE(x, FloatConst(x->getType(), 0.0));
    return b.CreateICmpNE(x, Int(x->getType(), 0));
  }
  if (from == ElementType::kPred || IsIntegral(from)) {
    const bool is_signed = IsSignedIntegral(from);
    if (IsIntegral(to)) return is_signed ? b.CreateSExtOrTrunc(x, target) : b.CreateZExtOrTrunc(x, target);
    // Integer to float rounds once to float for F16/BF16, as the interpreter does.
    llvm::Value* value = is_signed ? b.CreateSIToFP(x, target) : b.CreateUIToFP(x, target);
    return RoundToType(b, to, value);
  }
  // From a float: to integers saturating with NaN -> 0 (llvm.fpto*i.sat).
  if (IsIntegral(to)) {
    const auto id = IsSignedIntegral(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return b.CreateIntrinsic(id, {target, x->getType()}, {x});
  }
  if (to == ElementType::kF64) return x->getType()->isDoubleTy() ? x : b.CreateFPExt(x, target);
  llvm::Value* single = x->getType()->isDoubleTy() ? b.CreateFPTrunc(x, b.getFloatTy()) : x;
  return RoundToType(b, to, single);
}

llvm::Value* EmitBitcastConvert(llvm::IRBuilder<>& b, ElementType from, ElementType to, llvm::Value* x) {
  if (from == to) return x;
  return FromBits(b, to, ToBits(b, from, x));
}

llvm::Value* EmitIsFinite(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Value* abs = CallIntrinsic(b, llvm::Intrinsic::fabs, {x});
  return b.CreateFCmpOLT(abs, FloatConst(x->getType(), std::numeric_limits<double>::infinity()));
}

// XLA's reduce-precision on the bits: round the mantissa to nearest even,
// then flush exponents out of the reduced range to zero or infinity.
llvm::Value* EmitReducePrecision(llvm::IRBuilder<>& b, ElementType type, llvm::Value* x,
                                 int64_t exponent_bits, int64_t mantissa_bits) {
  const bool is_double = type == ElementType::kF64;
  const int width = is_double ? 64 : 32;
  const int source_mantissa = is_double ? 52 : 23;
  const int source_exponent = width - source_mantissa - 1;
  llvm::Type* t = b.getIntNTy(static_cast<unsigned>(width));
  // Shifted constants wrap at the bit width, as the interpreter's do.
  const uint64_t width_mask = is_double ? ~uint64_t{0} : 0xFFFFFFFFu;
  llvm::Value* bits = b.CreateBitCast(x, t);
  if (mantissa_bits < source_mantissa) {
    const int dropped = source_mantissa - static_cast<int>(mantissa_bits);
    const uint64_t last_kept = uint64_t{1} << dropped;
    const uint64_t base_bias = (last_kept >> 1) - 1;
    llvm::Value* bias =
        b.CreateAdd(b.CreateLShr(b.CreateAnd(bits, Int(t, last_kept)), Int(t, dropped)), Int(t, base_bias));
    bits = b.CreateAnd(b.CreateAdd(bits, bias), Int(t, ~(last_kept - 1) & width_mask));
  }
  if (exponent_bits < source_exponent) {
    const uint64_t sign_mask = uint64_t{1} << (width - 1);
    const uint64_t exponent_mask = ((uint64_t{1} << source_exponent) - 1) << source_mantissa;
    const int64_t exponent_bias = (int64_t{1} << (source_exponent - 1)) - 1;
    const int64_t reduced_bias = (int64_t{1} << (exponent_bits - 1)) - 1;
    const auto max_exponent = static_cast<uint64_t>(exponent_bias + reduced_bias);
    const auto min_exponent = static_cast<uint64_t>(exponent_bias - reduced_bias);
    llvm::Value* exponent = b.CreateAnd(bits, Int(t, exponent_mask));
    llvm::Value* sign = b.CreateAnd(bits, Int(t, sign_mask));
    llvm::Value* overflow = b.CreateICmpUGT(exponent, Int(t, (max_exponent << source_mantissa) & width_mask));
    llvm::Value* underflow =
        b.CreateICmpULE(exponent, Int(t, (min_exponent << source_mantissa) & width_mask));
    bits = b.CreateSelect(overflow, b.CreateOr(sign, Int(t, exponent_mask)),
                          b.CreateSelect(underflow, sign, bits));
  }
  llvm::Value* reduced = b.CreateBitCast(bits, x->getType());
  llvm::Value* nan_result =
      mantissa_bits > 0 ? x : FloatConst(x->getType(), std::numeric_limits<double>::infinity());
  return RoundToType(b, type, b.CreateSelect(IsNan(b, x), nan_result, reduced));
}

}  // namespace kiln::llvm_ir
