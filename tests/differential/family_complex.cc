// Complex numbers (c64, c128): arithmetic, the functions std::complex has,
// building from and splitting into real parts, (in)equality with select, and
// sums over dimensions. Values are never exact (rounding is compared within
// the part type's tolerance); magnitudes are kept small so that no function
// overflows and bounds stay meaningful.
#include <algorithm>
#include <cmath>
#include <vector>

#include "tests/differential/moves.h"

namespace kiln::differential {
namespace {

// Operands at most this large go into exp, division and the like.
constexpr double kSmall = 4.0;

Value PickSmall(GraphContext& context) {
  return context.Pick([](const Value& value) { return value.bound <= kSmall; });
}

}  // namespace

bool EmitComplexUnary(GraphContext& context) {
  Builder& b = context.builder();
  const Value x = PickSmall(context);
  context.Use(x);
  // (opcode, bound of the result for |x| <= bound): conservative.
  const double bound = x.bound;
  switch (context.random().Between(0, 8)) {
    case 0: context.Record(b.UnaryOp(Opcode::kNegate, x.op), bound, false); break;
    case 1: context.Record(b.Exp(x.op), std::exp(bound), false); break;
    case 2: context.Record(b.UnaryOp(Opcode::kSin, x.op), std::cosh(bound), false); break;
    case 3: context.Record(b.UnaryOp(Opcode::kCos, x.op), std::cosh(bound), false); break;
    case 4: context.Record(b.Sqrt(x.op), std::sqrt(bound) + 1.0, false); break;
    case 5: context.Record(b.UnaryOp(Opcode::kSign, x.op), 1.0, false); break;
    case 6: context.Record(b.Expm1(x.op), std::exp(bound) + 1.0, false); break;
    case 7: {
      // log of something away from 0: log(x + 8) (|x| <= 4).
      Op shifted = b.Add(x.op, b.Broadcast(context.ScalarConstant(8.0), x.shape.dimensions()));
      context.Record(b.Log(shifted), std::log(bound + 8.0) + 3.2, false);
      break;
    }
    default: {
      // abs as a complex value with a zero imaginary part.
      Op magnitude = b.Abs(x.op);
      context.Record(b.ConvertElementType(magnitude, context.type()), bound * 1.5, false);
      break;
    }
  }
  return true;
}

bool EmitComplexBinary(GraphContext& context) {
  Builder& b = context.builder();
  const Value x = PickSmall(context);
  const Value y = context.PickWithDims(x.shape.dimensions());
  if (y.bound > kSmall) return false;
  context.Use(x);
  context.Use(y);
  switch (context.random().Between(0, 3)) {
    case 0: context.Record(b.Add(x.op, y.op), x.bound + y.bound, false); break;
    case 1: context.Record(b.Sub(x.op, y.op), x.bound + y.bound, false); break;
    case 2: context.Record(b.Mul(x.op, y.op), 2.0 * x.bound * y.bound, false); break;
    default: {
      // Divide by y + 16, whose magnitude is at least 12.
      Op denominator = b.Add(y.op, b.Broadcast(context.ScalarConstant(16.0), y.shape.dimensions()));
      context.Record(b.Div(x.op, denominator), x.bound / 12.0 * 2.0, false);
      break;
    }
  }
  return true;
}

bool EmitComplexParts(GraphContext& context) {
  Builder& b = context.builder();
  const Value x = context.Pick();
  const Value y = context.PickWithDims(x.shape.dimensions());
  context.Use(x);
  context.Use(y);
  // complex(real(x), imag(y)): both parts travel through real arrays.
  context.Record(b.Complex(b.Real(x.op), b.Imag(y.op)), std::max(x.bound, y.bound), false);
  return true;
}

bool EmitComplexSelect(GraphContext& context) {
  Builder& b = context.builder();
  const Value x = context.Pick();
  const Value y = context.PickWithDims(x.shape.dimensions());
  context.Use(x);
  context.Use(y);
  // x == x is true except where a part is NaN; x != y compares two values.
  const bool self = context.random().Coin();
  Op predicate =
      b.Compare(x.op, self ? x.op : y.op, self ? ComparisonDirection::kEq : ComparisonDirection::kNe);
  context.Record(b.Select(predicate, x.op, y.op), std::max(x.bound, y.bound), false);
  return true;
}

bool EmitComplexSum(GraphContext& context) {
  Builder& b = context.builder();
  const Value x = context.Pick([](const Value& value) { return value.shape.rank() >= 1; });
  if (x.shape.rank() < 1) return false;
  context.Use(x);
  const int64_t dimension = context.random().Between(0, x.shape.rank() - 1);
  std::unique_ptr<Module> add = context.BinaryComputation(Opcode::kAdd, context.type());
  if (add == nullptr) return false;
  Op sum = b.Reduce(x.op, context.ScalarConstant(0.0), *add, std::vector<int64_t>{dimension});
  context.Record(sum, x.bound * static_cast<double>(x.shape.dimensions(dimension)), false);
  return true;
}

}  // namespace kiln::differential
