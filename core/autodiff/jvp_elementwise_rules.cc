// Forward-mode rules of the elementwise ops: each operand's tangent times
// the partial derivative the reverse-mode rule (elementwise_rules.cc) uses,
// with the same conventions where a derivative is undefined (JAX's: a tie
// of maximum shares equally, abs at 0 has derivative 1, log(0) is read as 0
// in the exponent's derivative of power), so that <w, J v> of forward mode
// equals <J^T w, v> of reverse mode. `ta`, `tb` are the operands' tangents
// (null when zero), `y` the forward result.
#include <cmath>
#include <numbers>

#include "core/autodiff/jvp_rules.h"
#include "core/autodiff/rule_helpers.h"

namespace kiln::autodiff {
namespace {

Instruction* Mul(VjpEmitter& e, Instruction* x, Instruction* y) { return e.Binary(Opcode::kMultiply, x, y); }
Instruction* Div(VjpEmitter& e, Instruction* x, Instruction* y) { return e.Binary(Opcode::kDivide, x, y); }
Instruction* AddOp(VjpEmitter& e, Instruction* x, Instruction* y) { return e.Binary(Opcode::kAdd, x, y); }
Instruction* Sub(VjpEmitter& e, Instruction* x, Instruction* y) { return e.Binary(Opcode::kSubtract, x, y); }
Instruction* Neg(VjpEmitter& e, Instruction* x) { return e.Unary(Opcode::kNegate, x); }
Instruction* Constant(VjpEmitter& e, double value, const Instruction& like) {
  return e.Full(value, like.shape);
}

// a + b where either may be zero (null).
Instruction* Sum(VjpEmitter& e, Instruction* a, Instruction* b) {
  if (a == nullptr) return b;
  if (b == nullptr) return a;
  return AddOp(e, a, b);
}

// t * factor, zero (null) when t is; `factor` is built only when needed.
template <typename Factor>
Instruction* Scaled(VjpEmitter& e, Instruction* t, Factor factor) {
  return t == nullptr ? nullptr : Mul(e, t, factor());
}

// The tangent of operand `i` of `x` spread to `x`'s shape where the operand
// is a scalar (a clamp bound, a select predicate's operands never are).
Instruction* SpreadTangent(VjpEmitter& e, const Instruction& x, std::span<const Tangent> t, size_t i) {
  Instruction* tangent = t[i].array;
  if (tangent == nullptr || tangent->shape.dimensions() == x.shape.dimensions()) return tangent;
  return e.BroadcastInDim(tangent, x.shape, {});
}

Instruction* Spread(VjpEmitter& e, const Instruction& x, size_t i) {
  Instruction* operand = x.operand(i);
  if (operand->shape.dimensions() == x.shape.dimensions()) return operand;
  return e.BroadcastInDim(operand, x.shape, {});
}

Tangent Result(Instruction* value) { return Of(value); }

}  // namespace

KILN_JVP_RULE(JvpAddRule) { return Result(Sum(e, t[0].array, t[1].array)); }

KILN_JVP_RULE(JvpSubtractRule) {
  return Result(Sum(e, t[0].array, t[1].array == nullptr ? nullptr : Neg(e, t[1].array)));
}

KILN_JVP_RULE(JvpMultiplyRule) {
  return Result(Sum(e, Scaled(e, t[0].array, [&] { return x.operand(1); }),
                    Scaled(e, t[1].array, [&] { return x.operand(0); })));
}

KILN_JVP_RULE(JvpDivideRule) {
  // d(a/b) = (da - db * y) / b.
  Instruction* numerator =
      Sum(e, t[0].array, t[1].array == nullptr ? nullptr : Neg(e, Mul(e, t[1].array, &x)));
  return Result(Div(e, numerator, x.operand(1)));
}

KILN_JVP_RULE(JvpRemainderRule) {
  // rem(a, b) = a - b * trunc(a / b): the quotient's steps have no derivative.
  Instruction* db = Scaled(e, t[1].array, [&] {
    Instruction* quotient = Div(e, x.operand(0), x.operand(1));
    return Neg(e, Mul(e, e.Unary(Opcode::kSign, quotient),
                      e.Unary(Opcode::kFloor, e.Unary(Opcode::kAbs, quotient))));
  });
  return Result(Sum(e, t[0].array, db));
}

KILN_JVP_RULE(JvpPowerRule) {
  // d/da a^b = b * a^(b-1); d/db a^b = log(a) * a^b with log(a) read as 0
  // where a == 0 (JAX's rule).
  Instruction* a = x.operand(0);
  Instruction* b = x.operand(1);
  Instruction* da = Scaled(
      e, t[0].array, [&] { return Mul(e, b, e.Binary(Opcode::kPower, a, Sub(e, b, Constant(e, 1.0, x)))); });
  Instruction* db = Scaled(e, t[1].array, [&] {
    Instruction* a_is_zero = e.Compare(a, Constant(e, 0.0, x), ComparisonDirection::kEq);
    return Mul(e, e.Unary(Opcode::kLog, e.Select(a_is_zero, Constant(e, 1.0, x), a)), &x);
  });
  return Result(Sum(e, da, db));
}

KILN_JVP_RULE(JvpAtan2Rule) {
  // atan2(a, b): (da * b - db * a) / (a^2 + b^2).
  Instruction* a = x.operand(0);
  Instruction* b = x.operand(1);
  Instruction* numerator = Sum(e, Scaled(e, t[0].array, [&] { return b; }),
                               t[1].array == nullptr ? nullptr : Neg(e, Mul(e, t[1].array, a)));
  return Result(Div(e, numerator, AddOp(e, Mul(e, a, a), Mul(e, b, b))));
}

KILN_JVP_RULE(JvpMaxMinRule) {
  // The operand equal to the result passes its tangent; on a tie each
  // passes half (JAX's balanced rule).
  auto share = [&](size_t mine) {
    return [&, mine] {
      Instruction* zero = Constant(e, 0.0, x);
      Instruction* mine_is_result = e.Compare(x.operand(mine), &x, ComparisonDirection::kEq);
      Instruction* other_is_result = e.Compare(x.operand(1 - mine), &x, ComparisonDirection::kEq);
      return e.Select(mine_is_result, e.Select(other_is_result, Constant(e, 0.5, x), Constant(e, 1.0, x)),
                      zero);
    };
  };
  return Result(Sum(e, Scaled(e, t[0].array, share(0)), Scaled(e, t[1].array, share(1))));
}

KILN_JVP_RULE(JvpUnaryRule) {
  Instruction* ta = t[0].array;
  Instruction* a = x.operand(0);
  Instruction* y = &x;
  Instruction* derivative = nullptr;
  switch (x.opcode) {
    case Opcode::kNegate: return Result(Neg(e, ta));
    case Opcode::kAbs: {
      // Of a complex z: Re(conj(z) dz) / |z|, 0 at 0 (the reverse rule's
      // transpose). Of a real: +1 from 0 up, as JAX (|x|' = 1 at 0).
      if (IsComplex(a->shape.element_type())) {
        Instruction* real_type_zero = Constant(e, 0.0, x);
        Instruction* dot = AddOp(e, Mul(e, e.Unary(Opcode::kReal, a), e.Unary(Opcode::kReal, ta)),
                                 Mul(e, e.Unary(Opcode::kImag, a), e.Unary(Opcode::kImag, ta)));
        Instruction* at_zero = e.Compare(y, real_type_zero, ComparisonDirection::kEq);
        return Result(
            e.Select(at_zero, real_type_zero, Div(e, dot, e.Select(at_zero, Constant(e, 1.0, x), y))));
      }
      Instruction* non_negative = e.Compare(a, Constant(e, 0.0, x), ComparisonDirection::kGe);
      return Result(e.Select(non_negative, ta, Neg(e, ta)));
    }
    case Opcode::kCbrt: return Result(Div(e, ta, Mul(e, Constant(e, 3.0, x), Mul(e, y, y))));
    case Opcode::kCos: derivative = Neg(e, e.Unary(Opcode::kSin, a)); break;
    case Opcode::kErf:  // 2 / sqrt(pi) * exp(-a^2)
      derivative =
          Mul(e, Constant(e, 2.0 * std::numbers::inv_sqrtpi, x), e.Unary(Opcode::kExp, Neg(e, Mul(e, a, a))));
      break;
    case Opcode::kExp: derivative = y; break;
    case Opcode::kExpm1: derivative = AddOp(e, y, Constant(e, 1.0, x)); break;
    case Opcode::kLog: return Result(Div(e, ta, a));
    case Opcode::kLog1p: return Result(Div(e, ta, AddOp(e, a, Constant(e, 1.0, x))));
    case Opcode::kLogistic: derivative = Mul(e, y, Sub(e, Constant(e, 1.0, x), y)); break;
    case Opcode::kRsqrt: derivative = Mul(e, Div(e, y, a), Constant(e, -0.5, x)); break;
    case Opcode::kSin: derivative = e.Unary(Opcode::kCos, a); break;
    case Opcode::kSqrt: return Result(Div(e, ta, Mul(e, y, Constant(e, 2.0, x))));
    case Opcode::kTan: derivative = AddOp(e, Constant(e, 1.0, x), Mul(e, y, y)); break;
    case Opcode::kTanh: derivative = Sub(e, Constant(e, 1.0, x), Mul(e, y, y)); break;
    default: return Internal("kiln jvp: JvpUnaryRule has no case for '", OpcodeName(x.opcode), "'");
  }
  return Result(Mul(e, ta, derivative));
}

KILN_JVP_RULE(JvpZeroRule) {
  // floor, ceil, rounding, sign: piecewise constant.
  return Tangent{};
}

KILN_JVP_RULE(JvpIdentityRule) { return t[0]; }

KILN_JVP_RULE(JvpSelectRule) {
  if (t[1].IsZero() && t[2].IsZero()) return Tangent{};
  Instruction* pred = x.operand(0);
  if (pred->shape.dimensions() != x.shape.dimensions()) pred = e.BroadcastInDim(pred, x.shape, {});
  return Result(e.Select(pred, DenseTangent(e, t[1], x.shape), DenseTangent(e, t[2], x.shape)));
}

KILN_JVP_RULE(JvpClampRule) {
  // clamp(lo, v, hi): v's tangent strictly inside (lo, hi), lo's where it
  // is above v (and below hi), hi's where it is below v (JAX's rule).
  Instruction* lo = Spread(e, x, 0);
  Instruction* v = x.operand(1);
  Instruction* hi = Spread(e, x, 2);
  auto both = [&](Instruction* p, Instruction* q) { return e.Binary(Opcode::kAnd, p, q); };
  auto where = [&](Instruction* tangent, auto condition) -> Instruction* {
    if (tangent == nullptr) return nullptr;
    return e.Select(condition(), tangent, Constant(e, 0.0, x));
  };
  Instruction* from_v = where(t[1].array, [&] {
    return both(e.Compare(v, lo, ComparisonDirection::kGt), e.Compare(v, hi, ComparisonDirection::kLt));
  });
  Instruction* from_lo = where(SpreadTangent(e, x, t, 0), [&] {
    return both(e.Compare(lo, v, ComparisonDirection::kGt), e.Compare(lo, hi, ComparisonDirection::kLt));
  });
  Instruction* from_hi =
      where(SpreadTangent(e, x, t, 2), [&] { return e.Compare(hi, v, ComparisonDirection::kLt); });
  return Result(Sum(e, Sum(e, from_v, from_lo), from_hi));
}

KILN_JVP_RULE(JvpConvertRule) {
  // Only conversions between floats and complex numbers carry a tangent
  // (complex to real keeps the real part, of the tangent too).
  if (!CarriesGradient(x.operand(0)->shape.element_type()) || !CarriesGradient(x.shape.element_type())) {
    return Tangent{};
  }
  return Result(e.Convert(t[0].array, x.shape.element_type()));
}

}  // namespace kiln::autodiff
