// Derivative rules of the elementwise ops. `g` is the result's cotangent,
// `y` the forward result, `a`, `b` the operands. Where a derivative is
// undefined at a point (a tie of maximum, abs at 0, power at 0) the rules
// follow JAX's conventions, so gradients agree with JAX's.
#include <cmath>
#include <numbers>

#include "core/autodiff/rule_helpers.h"
#include "core/autodiff/vjp_rules.h"

namespace kiln::autodiff {
namespace {

// The operand cotangent `value` (of the result's shape) summed down to the
// operand's shape (a scalar clamp bound), in the operand's element type.
Cotangent ForOperand(VjpEmitter& e, Instruction* value, const Instruction& operand) {
  return Of(e.SumToShape(value, operand.shape));
}

Instruction* Mul(VjpEmitter& e, Instruction* x, Instruction* y) { return e.Binary(Opcode::kMultiply, x, y); }
Instruction* Div(VjpEmitter& e, Instruction* x, Instruction* y) { return e.Binary(Opcode::kDivide, x, y); }
Instruction* AddOp(VjpEmitter& e, Instruction* x, Instruction* y) { return e.Binary(Opcode::kAdd, x, y); }
Instruction* Sub(VjpEmitter& e, Instruction* x, Instruction* y) { return e.Binary(Opcode::kSubtract, x, y); }
Instruction* Neg(VjpEmitter& e, Instruction* x) { return e.Unary(Opcode::kNegate, x); }
Instruction* Constant(VjpEmitter& e, double value, const Instruction& like) {
  return e.Full(value, like.shape);
}

// The operand of `x` broadcast to `x`'s shape where it is a scalar bound.
Instruction* Spread(VjpEmitter& e, const Instruction& x, size_t i) {
  Instruction* operand = x.operand(i);
  if (operand->shape.dimensions() == x.shape.dimensions()) return operand;
  return e.BroadcastInDim(operand, x.shape, {});
}

}  // namespace

KILN_VJP_RULE(AddRule) { return std::vector<Cotangent>{Of(ct.array), Of(ct.array)}; }

KILN_VJP_RULE(SubtractRule) { return std::vector<Cotangent>{Of(ct.array), Of(Neg(e, ct.array))}; }

KILN_VJP_RULE(MultiplyRule) {
  return std::vector<Cotangent>{Of(Mul(e, ct.array, x.operand(1))), Of(Mul(e, ct.array, x.operand(0)))};
}

KILN_VJP_RULE(DivideRule) {
  // d(a/b) = da / b - db * a / b^2 = (da - db * y) / b.
  Instruction* over_b = Div(e, ct.array, x.operand(1));
  Instruction* y = &x;
  return std::vector<Cotangent>{Of(over_b), Of(Neg(e, Mul(e, over_b, y)))};
}

KILN_VJP_RULE(RemainderRule) {
  // rem(a, b) = a - b * trunc(a / b): the quotient's steps have no derivative.
  Instruction* quotient = Div(e, x.operand(0), x.operand(1));
  Instruction* truncated =
      Mul(e, e.Unary(Opcode::kSign, quotient), e.Unary(Opcode::kFloor, e.Unary(Opcode::kAbs, quotient)));
  return std::vector<Cotangent>{Of(ct.array), Of(Neg(e, Mul(e, ct.array, truncated)))};
}

KILN_VJP_RULE(PowerRule) {
  // d/da a^b = b * a^(b-1) (NaN for 0^0, as JAX's rule for float exponents);
  // d/db a^b = log(a) * a^b, with log(a) read as 0 where a == 0 (JAX's rule),
  // so that 0^b has no gradient in b.
  Instruction* a = x.operand(0);
  Instruction* b = x.operand(1);
  Instruction* y = &x;
  Instruction* one = Constant(e, 1.0, x);
  Instruction* da = Mul(e, b, e.Binary(Opcode::kPower, a, Sub(e, b, one)));
  Instruction* a_is_zero = e.Compare(a, Constant(e, 0.0, x), ComparisonDirection::kEq);
  Instruction* log_a = e.Unary(Opcode::kLog, e.Select(a_is_zero, one, a));
  return std::vector<Cotangent>{Of(Mul(e, ct.array, da)), Of(Mul(e, ct.array, Mul(e, log_a, y)))};
}

KILN_VJP_RULE(Atan2Rule) {
  // atan2(a, b): d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2).
  Instruction* a = x.operand(0);
  Instruction* b = x.operand(1);
  Instruction* g_over_norm = Div(e, ct.array, AddOp(e, Mul(e, a, a), Mul(e, b, b)));
  return std::vector<Cotangent>{Of(Mul(e, g_over_norm, b)), Of(Neg(e, Mul(e, g_over_norm, a)))};
}

KILN_VJP_RULE(MaxMinRule) {
  // The operand equal to the result gets the cotangent; on a tie each gets
  // half (JAX's balanced rule, so that max(a, a) has derivative 1).
  Instruction* y = &x;
  Instruction* zero = Constant(e, 0.0, x);
  Instruction* half = Constant(e, 0.5, x);
  Instruction* one = Constant(e, 1.0, x);
  auto share = [&](Instruction* mine, Instruction* other) {
    Instruction* mine_is_result = e.Compare(mine, y, ComparisonDirection::kEq);
    Instruction* other_is_result = e.Compare(other, y, ComparisonDirection::kEq);
    return e.Select(mine_is_result, e.Select(other_is_result, half, one), zero);
  };
  return std::vector<Cotangent>{Of(Mul(e, ct.array, share(x.operand(0), x.operand(1)))),
                                Of(Mul(e, ct.array, share(x.operand(1), x.operand(0))))};
}

KILN_VJP_RULE(UnaryRule) {
  Instruction* g = ct.array;
  Instruction* a = x.operand(0);
  Instruction* y = &x;
  Instruction* derivative = nullptr;
  switch (x.opcode) {
    case Opcode::kNegate: return std::vector<Cotangent>{Of(Neg(e, g))};
    case Opcode::kAbs: {  // +1 from 0 up, as JAX (so |x| at 0 has derivative 1)
      if (IsComplex(a->shape.element_type())) return ComplexAbsRule(e, x, ct);
      Instruction* non_negative = e.Compare(a, Constant(e, 0.0, x), ComparisonDirection::kGe);
      return std::vector<Cotangent>{Of(e.Select(non_negative, g, Neg(e, g)))};
    }
    case Opcode::kCbrt:  // 1 / (3 y^2)
      return std::vector<Cotangent>{Of(Div(e, g, Mul(e, Constant(e, 3.0, x), Mul(e, y, y))))};
    case Opcode::kCos: derivative = Neg(e, e.Unary(Opcode::kSin, a)); break;
    case Opcode::kErf:  // 2 / sqrt(pi) * exp(-a^2)
      derivative =
          Mul(e, Constant(e, 2.0 * std::numbers::inv_sqrtpi, x), e.Unary(Opcode::kExp, Neg(e, Mul(e, a, a))));
      break;
    case Opcode::kExp: derivative = y; break;
    case Opcode::kExpm1: derivative = AddOp(e, y, Constant(e, 1.0, x)); break;
    case Opcode::kLog: return std::vector<Cotangent>{Of(Div(e, g, a))};
    case Opcode::kLog1p: return std::vector<Cotangent>{Of(Div(e, g, AddOp(e, a, Constant(e, 1.0, x))))};
    case Opcode::kLogistic: derivative = Mul(e, y, Sub(e, Constant(e, 1.0, x), y)); break;
    case Opcode::kRsqrt: derivative = Mul(e, Div(e, y, a), Constant(e, -0.5, x)); break;
    case Opcode::kSin: derivative = e.Unary(Opcode::kCos, a); break;
    case Opcode::kSqrt: return std::vector<Cotangent>{Of(Div(e, g, Mul(e, y, Constant(e, 2.0, x))))};
    case Opcode::kTan: derivative = AddOp(e, Constant(e, 1.0, x), Mul(e, y, y)); break;
    case Opcode::kTanh: derivative = Sub(e, Constant(e, 1.0, x), Mul(e, y, y)); break;
    default: return Internal("kiln grad: UnaryRule has no case for '", OpcodeName(x.opcode), "'");
  }
  return std::vector<Cotangent>{Of(Mul(e, g, derivative))};
}

KILN_VJP_RULE(ZeroDerivativeRule) {
  // floor, ceil, rounding, sign: piecewise constant.
  return std::vector<Cotangent>(x.operands.size());
}

KILN_VJP_RULE(IdentityRule) { return std::vector<Cotangent>{ct}; }

KILN_VJP_RULE(SelectRule) {
  Instruction* zero = Constant(e, 0.0, x);
  Instruction* pred = x.operand(0);
  if (pred->shape.dimensions() != x.shape.dimensions()) pred = e.BroadcastInDim(pred, x.shape, {});
  return std::vector<Cotangent>{Cotangent{}, Of(e.Select(pred, ct.array, zero)),
                                Of(e.Select(pred, zero, ct.array))};
}

KILN_VJP_RULE(ClampRule) {
  // clamp(lo, v, hi): v gets the cotangent strictly inside (lo, hi), lo
  // where it is above v (and below hi), hi where it is below v (JAX's rule).
  Instruction* lo = Spread(e, x, 0);
  Instruction* v = x.operand(1);
  Instruction* hi = Spread(e, x, 2);
  Instruction* zero = Constant(e, 0.0, x);
  auto both = [&](Instruction* p, Instruction* q) { return e.Binary(Opcode::kAnd, p, q); };
  Instruction* inside =
      both(e.Compare(v, lo, ComparisonDirection::kGt), e.Compare(v, hi, ComparisonDirection::kLt));
  Instruction* at_lo =
      both(e.Compare(lo, v, ComparisonDirection::kGt), e.Compare(lo, hi, ComparisonDirection::kLt));
  Instruction* at_hi = e.Compare(hi, v, ComparisonDirection::kLt);
  return std::vector<Cotangent>{ForOperand(e, e.Select(at_lo, ct.array, zero), *x.operand(0)),
                                Of(e.Select(inside, ct.array, zero)),
                                ForOperand(e, e.Select(at_hi, ct.array, zero), *x.operand(2))};
}

KILN_VJP_RULE(ConvertRule) {
  // Only conversions between floats and complex numbers carry a gradient;
  // the driver drops cotangents of integer values and operands. A real
  // number made complex gets the real part of its cotangent (JAX's rule).
  const ElementType from = x.operand(0)->shape.element_type();
  if (!CarriesGradient(from) || !CarriesGradient(x.shape.element_type())) return std::vector<Cotangent>(1);
  Instruction* g = ct.array;
  if (IsComplex(g->shape.element_type()) && !IsComplex(from)) g = e.Unary(Opcode::kReal, g);
  return std::vector<Cotangent>{Of(e.Convert(g, from))};
}

}  // namespace kiln::autodiff
