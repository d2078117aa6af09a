// Unary and binary elementwise ops. Float operands are first brought into
// the domain where the op is smooth (log of |x| + 1, exp of a clamped x,
// division by |y| + 1), so results are comparable across backends; integers
// use their whole range, since XLA defines every case (wrap-around, x / 0,
// oversized shifts).
#include <algorithm>
#include <cmath>
#include <vector>

#include "tests/differential/moves.h"

namespace kiln::differential {
namespace {

std::vector<Opcode> UnaryOpcodes(ElementType type) {
  if (type == ElementType::kPred) return {Opcode::kNot, Opcode::kCopy};
  if (IsUnsignedIntegral(type))
    return {Opcode::kNegate, Opcode::kNot, Opcode::kClz, Opcode::kPopcnt, Opcode::kCopy};
  if (IsSignedIntegral(type)) {
    return {Opcode::kAbs, Opcode::kNegate, Opcode::kSign, Opcode::kNot,
            Opcode::kClz, Opcode::kPopcnt, Opcode::kCopy};
  }
  return {Opcode::kAbs,
          Opcode::kNegate,
          Opcode::kSign,
          Opcode::kFloor,
          Opcode::kCeil,
          Opcode::kRoundNearestAfz,
          Opcode::kRoundNearestEven,
          Opcode::kExp,
          Opcode::kExpm1,
          Opcode::kLog,
          Opcode::kLog1p,
          Opcode::kLogistic,
          Opcode::kSqrt,
          Opcode::kRsqrt,
          Opcode::kCbrt,
          Opcode::kSin,
          Opcode::kCos,
          Opcode::kTan,
          Opcode::kTanh,
          Opcode::kErf,
          Opcode::kCopy};
}

std::vector<Opcode> BinaryOpcodes(ElementType type) {
  if (type == ElementType::kPred)
    return {Opcode::kAnd, Opcode::kOr, Opcode::kXor, Opcode::kMaximum, Opcode::kMinimum};
  if (IsIntegral(type)) {
    return {Opcode::kAdd,
            Opcode::kSubtract,
            Opcode::kMultiply,
            Opcode::kDivide,
            Opcode::kRemainder,
            Opcode::kMaximum,
            Opcode::kMinimum,
            Opcode::kAnd,
            Opcode::kOr,
            Opcode::kXor,
            Opcode::kShiftLeft,
            Opcode::kShiftRightArithmetic,
            Opcode::kShiftRightLogical,
            Opcode::kPower};
  }
  return {Opcode::kAdd,     Opcode::kSubtract, Opcode::kMultiply, Opcode::kDivide, Opcode::kRemainder,
          Opcode::kMaximum, Opcode::kMinimum,  Opcode::kPower,    Opcode::kAtan2};
}

bool IsRounding(Opcode opcode) {
  return opcode == Opcode::kSign || opcode == Opcode::kFloor || opcode == Opcode::kCeil ||
         opcode == Opcode::kRoundNearestAfz || opcode == Opcode::kRoundNearestEven;
}

// |x| + 1: at least one, exact when x is.
Value AbsPlusOne(GraphContext& context, const Value& x) {
  Builder& b = context.builder();
  Op op = b.Add(b.Abs(x.op), context.ScalarConstant(1.0));
  return context.Record(op, x.bound + 1.0, context.StaysExact(x.exact, x.bound + 1.0));
}

Value FloatUnary(GraphContext& context, Opcode opcode, Value x) {
  Builder& b = context.builder();
  // Discontinuous at non-integers: only on exact values (identity there,
  // except sign), else a smooth op instead.
  if (IsRounding(opcode) && !x.exact) opcode = Opcode::kTanh;
  switch (opcode) {
    case Opcode::kAbs:
    case Opcode::kNegate:
    case Opcode::kCopy:
    case Opcode::kFloor:
    case Opcode::kCeil:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven: return context.Record(b.UnaryOp(opcode, x.op), x.bound, x.exact);
    case Opcode::kSign: return context.Record(b.Sign(x.op), 1.0, true);
    case Opcode::kExp:
    case Opcode::kExpm1:
      x = context.Limit(x, 4.0);
      return context.Record(b.UnaryOp(opcode, x.op), std::exp(4.0), false);
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kSqrt:
    case Opcode::kCbrt: {
      Value positive = AbsPlusOne(context, x);
      const double bound = opcode == Opcode::kLog || opcode == Opcode::kLog1p ? std::log(positive.bound + 1.0)
                                                                              : std::sqrt(positive.bound);
      return context.Record(b.UnaryOp(opcode, positive.op), bound, false);
    }
    case Opcode::kRsqrt: {
      Value positive = AbsPlusOne(context, x);
      return context.Record(b.Rsqrt(positive.op), 1.0, false);
    }
    case Opcode::kSin:
    case Opcode::kCos: x = context.Limit(x, 64.0); return context.Record(b.UnaryOp(opcode, x.op), 1.0, false);
    case Opcode::kTan: x = context.Limit(x, 1.0); return context.Record(b.Tan(x.op), 1.6, false);
    default: return context.Record(b.UnaryOp(opcode, x.op), 1.0, false);  // logistic, tanh, erf
  }
}

Value IntegerUnary(GraphContext& context, Opcode opcode, const Value& x) {
  double bound = x.bound;
  if (opcode == Opcode::kSign) bound = 1.0;
  if (opcode == Opcode::kClz || opcode == Opcode::kPopcnt) bound = 64.0;
  // ~x and -x of unsigned values can be anything; saturate.
  if (opcode == Opcode::kNot || opcode == Opcode::kNegate) {
    bound = IsUnsignedIntegral(context.type()) || opcode == Opcode::kNot ? context.Saturate(1e300)
                                                                         : x.bound + 1.0;
  }
  return context.Record(context.builder().UnaryOp(opcode, x.op), bound, true);
}

// The partner of `x` for a binary op: same dims, or sometimes a scalar.
Value Partner(GraphContext& context, const Value& x) {
  if (!x.shape.dimensions().empty() && context.random().Chance(1, 5)) return context.PickWithDims({});
  return context.PickWithDims(x.shape.dimensions());
}

Value FloatBinary(GraphContext& context, Opcode opcode, Value x, Value y) {
  Builder& b = context.builder();
  const double cap = context.Cap();
  switch (opcode) {
    case Opcode::kAdd:
    case Opcode::kSubtract: {
      x = context.Limit(x, cap / 2);
      y = context.Limit(y, cap / 2);
      const double bound = x.bound + y.bound;
      return context.Record(b.BinaryOp(opcode, x.op, y.op), bound,
                            context.StaysExact(x.exact && y.exact, bound));
    }
    case Opcode::kMultiply: {
      x = context.Limit(x, std::sqrt(cap));
      y = context.Limit(y, std::sqrt(cap));
      const double bound = x.bound * y.bound;
      return context.Record(b.Mul(x.op, y.op), bound, context.StaysExact(x.exact && y.exact, bound));
    }
    case Opcode::kDivide: {
      Value denominator = AbsPlusOne(context, y);
      return context.Record(b.Div(x.op, denominator.op), x.bound, false);
    }
    case Opcode::kRemainder: {
      // fmod jumps where x crosses a multiple of y: exact operands only.
      if (!x.exact) x = context.NewInput(x.shape, true);
      Value divisor = AbsPlusOne(context, y);
      if (!divisor.exact) return context.Record(b.Max(x.op, y.op), std::max(x.bound, y.bound), false);
      return context.Record(b.Rem(x.op, divisor.op), x.bound, true);
    }
    case Opcode::kMaximum:
    case Opcode::kMinimum:
      return context.Record(b.BinaryOp(opcode, x.op, y.op), std::max(x.bound, y.bound), x.exact && y.exact);
    case Opcode::kPower: {
      Value base = AbsPlusOne(context, context.Limit(x, 3.0));
      Value exponent = context.Limit(y, 3.0);
      return context.Record(b.Pow(base.op, exponent.op), 64.0, false);
    }
    default: {  // atan2 with a positive x: away from the branch cut.
      Value positive = AbsPlusOne(context, y);
      return context.Record(b.Atan2(x.op, positive.op), 3.2, false);
    }
  }
}

Value IntegerBinary(GraphContext& context, Opcode opcode, const Value& x, const Value& y) {
  double bound = context.Saturate(1e300);
  switch (opcode) {
    case Opcode::kAdd:
    case Opcode::kSubtract: bound = x.bound + y.bound; break;
    case Opcode::kMultiply: bound = x.bound * y.bound; break;
    case Opcode::kDivide: bound = std::max(x.bound, 1.0); break;
    case Opcode::kRemainder:
    case Opcode::kMaximum:
    case Opcode::kMinimum: bound = std::max(x.bound, y.bound); break;
    default: break;
  }
  return context.Record(context.builder().BinaryOp(opcode, x.op, y.op), bound, true);
}

}  // namespace

bool EmitUnary(GraphContext& context) {
  Value x = context.Pick();
  context.Use(x);
  const Opcode opcode = context.random().Pick(UnaryOpcodes(context.type()));
  if (context.is_float()) {
    FloatUnary(context, opcode, x);
  } else {
    IntegerUnary(context, opcode, x);
  }
  return true;
}

bool EmitBinary(GraphContext& context) {
  Value x = context.Pick();
  Value y = Partner(context, x);
  context.Use(x);
  context.Use(y);
  if (context.random().Coin()) std::swap(x, y);  // the scalar on either side
  const Opcode opcode = context.random().Pick(BinaryOpcodes(context.type()));
  if (context.is_float()) {
    if (x.shape.dimensions() != y.shape.dimensions()) {
      // Domain fixes (|y| + 1, ...) are built at the partner's shape; keep them
      // elementwise-equal by broadcasting the scalar first.
      const bool x_is_scalar = x.shape.dimensions().empty();
      Value& scalar = x_is_scalar ? x : y;
      const Value& array = x_is_scalar ? y : x;
      scalar = context.Record(context.builder().BroadcastInDim(scalar.op, array.shape.dimensions(), {}),
                              scalar.bound, scalar.exact);
    }
    FloatBinary(context, opcode, x, y);
  } else {
    IntegerBinary(context, opcode, x, y);
  }
  return true;
}

Value ApplyElementwise(GraphContext& context, const Value& value) {
  context.Use(value);
  RandomSource& random = context.random();
  if (random.Coin()) {
    const Opcode opcode = random.Pick(UnaryOpcodes(context.type()));
    return context.is_float() ? FloatUnary(context, opcode, value) : IntegerUnary(context, opcode, value);
  }
  const Opcode opcode = random.Pick(BinaryOpcodes(context.type()));
  Value other = context.NewInput(value.shape, random.Coin());
  Value x = value;
  if (random.Coin()) std::swap(x, other);
  return context.is_float() ? FloatBinary(context, opcode, x, other)
                            : IntegerBinary(context, opcode, x, other);
}

}  // namespace kiln::differential
