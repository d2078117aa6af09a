// Unary and binary elementwise ops: one tight typed loop per op.
#include <bit>
#include <cmath>
#include <complex>

#include "core/interpreter/kernels.h"
#include "core/interpreter/scalar_ops.h"

namespace kiln::interpreter {
namespace {

template <typename T>
T LogisticOf(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

// Integer sign / abs / negate with wrap-around (abs(INT_MIN) == INT_MIN).
template <typename T>
T IntegerNegate(T x) {
  return static_cast<T>(WrapType<T>(0) - static_cast<WrapType<T>>(x));
}

template <typename T>
T RoundHalfAwayFromZero(T x) {
  return std::round(x);
}
// Uses the exact floor/ceil arithmetic, not the thread's rounding mode.
template <typename T>
T RoundHalfToEven(T x) {
  const T floor = std::floor(x);
  const T diff = x - floor;
  T rounded;
  if (diff > T(0.5)) {
    rounded = floor + T(1);
  } else if (diff < T(0.5)) {
    rounded = floor;
  } else {
    rounded = std::fmod(floor, T(2)) == T(0) ? floor : floor + T(1);
  }
  return std::copysign(rounded, x);  // -0.4 rounds to -0, as XLA does
}

// Whether unary `opcode` is defined for T (abs of complex is handled apart).
template <typename T>
bool UnaryApplies(Opcode opcode) {
  if (IsElementaryFunction(opcode)) return kIsFloat<T> || kIsComplex<T>;
  switch (opcode) {
    case Opcode::kCopy: return true;
    case Opcode::kAbs:
    case Opcode::kNegate:
    case Opcode::kSign: return !kIsPred<T>;
    case Opcode::kFloor:
    case Opcode::kCeil:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kCbrt:
    case Opcode::kErf: return kIsFloat<T>;
    case Opcode::kNot: return kIsPred<T> || kIsInt<T>;
    case Opcode::kClz:
    case Opcode::kPopcnt: return kIsInt<T>;
    default: return false;
  }
}

// Applies a real-or-complex math function in T's compute type.
template <typename T, typename Fn>
T Math(T x, Fn fn) {
  using C = ComputeType<T>;
  return static_cast<T>(fn(static_cast<C>(x)));
}

template <typename T>
T UnaryScalar(Opcode opcode, T x) {
  using C = ComputeType<T>;
  if constexpr (kIsPred<T>) {
    return opcode == Opcode::kNot ? !x : x;
  } else if constexpr (kIsInt<T>) {
    using U = std::make_unsigned_t<T>;
    switch (opcode) {
      case Opcode::kAbs:
        if constexpr (std::is_signed_v<T>)
          return x < 0 ? IntegerNegate(x) : x;
        else
          return x;
      case Opcode::kNegate: return IntegerNegate(x);
      case Opcode::kSign:
        if constexpr (std::is_signed_v<T>)
          return static_cast<T>((x > 0) - (x < 0));
        else
          return static_cast<T>(x != 0);
      case Opcode::kNot: return static_cast<T>(~x);
      case Opcode::kClz: return static_cast<T>(std::countl_zero(static_cast<U>(x)));
      case Opcode::kPopcnt: return static_cast<T>(std::popcount(static_cast<U>(x)));
      default: return x;
    }
  } else if constexpr (kIsFloat<T>) {
    const C v = static_cast<C>(x);
    switch (opcode) {
      case Opcode::kAbs: return static_cast<T>(std::fabs(v));
      case Opcode::kNegate: return static_cast<T>(-v);
      case Opcode::kSign:
        if (std::isnan(v) || v == C(0)) return x;  // NaN stays NaN, +-0 keeps its sign
        return static_cast<T>(v > 0 ? C(1) : C(-1));
      case Opcode::kFloor: return static_cast<T>(std::floor(v));
      case Opcode::kCeil: return static_cast<T>(std::ceil(v));
      case Opcode::kRoundNearestAfz: return static_cast<T>(RoundHalfAwayFromZero(v));
      case Opcode::kRoundNearestEven:
        if (!std::isfinite(v)) return x;
        return static_cast<T>(RoundHalfToEven(v));
      case Opcode::kCbrt: return static_cast<T>(std::cbrt(v));
      case Opcode::kErf: return static_cast<T>(std::erf(v));
      case Opcode::kExp: return static_cast<T>(std::exp(v));
      case Opcode::kExpm1: return static_cast<T>(std::expm1(v));
      case Opcode::kLog: return static_cast<T>(std::log(v));
      case Opcode::kLog1p: return static_cast<T>(std::log1p(v));
      case Opcode::kLogistic: return static_cast<T>(LogisticOf(v));
      case Opcode::kSqrt: return static_cast<T>(std::sqrt(v));
      case Opcode::kRsqrt: return static_cast<T>(C(1) / std::sqrt(v));
      case Opcode::kSin: return static_cast<T>(std::sin(v));
      case Opcode::kCos: return static_cast<T>(std::cos(v));
      case Opcode::kTan: return static_cast<T>(std::tan(v));
      case Opcode::kTanh: return static_cast<T>(std::tanh(v));
      default: return x;
    }
  } else {  // complex
    using R = typename T::value_type;
    switch (opcode) {
      case Opcode::kNegate: return -x;
      case Opcode::kSign: {
        const R magnitude = std::abs(x);
        return magnitude == R(0) ? T(0) : x / magnitude;
      }
      case Opcode::kExp: return std::exp(x);
      case Opcode::kExpm1: return std::exp(x) - T(1);
      case Opcode::kLog: return std::log(x);
      case Opcode::kLog1p: return std::log(x + T(1));
      case Opcode::kLogistic: return LogisticOf(x);
      case Opcode::kSqrt: return std::sqrt(x);
      case Opcode::kRsqrt: return T(1) / std::sqrt(x);
      case Opcode::kSin: return std::sin(x);
      case Opcode::kCos: return std::cos(x);
      case Opcode::kTan: return std::tan(x);
      case Opcode::kTanh: return std::tanh(x);
      default: return x;
    }
  }
}

template <typename T, typename Fn>
void ApplyUnary(std::span<const T> in, std::span<T> out, Fn fn) {
  for (size_t i = 0; i < out.size(); ++i) out[i] = fn(in[i]);
}

}  // namespace

StatusOr<Literal> EvaluateUnary(const Instruction& instruction, Operands operands) {
  const Literal& input = *operands[0];
  const Opcode opcode = instruction.opcode;
  const ElementType type = input.shape().element_type();
  if (!input.shape().IsArray()) {
    if (opcode == Opcode::kCopy) return input;
    return InvalidArgument(OpcodeName(opcode), " needs an array operand, got ", input.shape().ToString());
  }
  Literal result(instruction.shape);
  if (result.element_count() != input.element_count()) {
    return Internal(OpcodeName(opcode), " result ", instruction.shape.ToString(), " does not match operand ",
                    input.shape().ToString());
  }
  if (opcode == Opcode::kAbs && IsComplex(type)) {
    if (result.shape().element_type() != ComplexComponentType(type)) {
      return Internal("abs of ", input.shape().ToString(), " must be real");
    }
    Status status = DispatchElementType(type, [&](auto tag) -> Status {
      using T = decltype(tag);
      if constexpr (kIsComplex<T>) {
        using R = typename T::value_type;
        auto in = input.data<T>();
        auto out = result.data<R>();
        for (size_t i = 0; i < out.size(); ++i) out[i] = std::abs(in[i]);
      }
      return OkStatus();
    });
    KILN_RETURN_IF_ERROR(status);
    return result;
  }
  if (result.shape().element_type() != type) {
    return Internal(OpcodeName(opcode), " changes the element type");
  }
  Status status = DispatchElementType(type, [&](auto tag) -> Status {
    using T = decltype(tag);
    if (!UnaryApplies<T>(opcode)) {
      return Unimplemented(OpcodeName(opcode), " is not defined for element type ", ElementTypeName(type));
    }
    auto in = input.data<T>();
    auto out = result.data<T>();
    if (opcode == Opcode::kCopy) {
      std::copy(in.begin(), in.end(), out.begin());
      return OkStatus();
    }
    ApplyUnary<T>(in, out, [opcode](T x) { return UnaryScalar<T>(opcode, x); });
    return OkStatus();
  });
  KILN_RETURN_IF_ERROR(status);
  return result;
}

StatusOr<Literal> EvaluateBinary(const Instruction& instruction, Operands operands) {
  const Literal& lhs = *operands[0];
  const Literal& rhs = *operands[1];
  const ElementType type = lhs.shape().element_type();
  if (!lhs.shape().IsArray() || rhs.shape().element_type() != type ||
      instruction.shape.element_type() != type) {
    return InvalidArgument(OpcodeName(instruction.opcode), " needs operands and result of one ",
                           "element type, got ", lhs.shape().ToString(), " and ", rhs.shape().ToString());
  }
  Literal result(instruction.shape);
  const int64_t count = result.element_count();
  // A scalar operand is broadcast; otherwise element counts must agree.
  const bool lhs_scalar = lhs.element_count() == 1 && count != 1;
  const bool rhs_scalar = rhs.element_count() == 1 && count != 1;
  if ((!lhs_scalar && lhs.element_count() != count) || (!rhs_scalar && rhs.element_count() != count)) {
    return InvalidArgument(OpcodeName(instruction.opcode), " operand shapes ", lhs.shape().ToString(),
                           " and ", rhs.shape().ToString(), " do not match result ",
                           instruction.shape.ToString());
  }
  return DispatchElementType(type, [&](auto tag) -> StatusOr<Literal> {
    using T = decltype(tag);
    auto a = lhs.data<T>();
    auto b = rhs.data<T>();
    auto out = result.data<T>();
    Status status = WithBinaryOp<T>(instruction.opcode, [&](auto op) {
      if (lhs_scalar) {
        const T scalar = a[0];
        for (size_t i = 0; i < out.size(); ++i) out[i] = op(scalar, b[i]);
      } else if (rhs_scalar) {
        const T scalar = b[0];
        for (size_t i = 0; i < out.size(); ++i) out[i] = op(a[i], scalar);
      } else {
        for (size_t i = 0; i < out.size(); ++i) out[i] = op(a[i], b[i]);
      }
    });
    KILN_RETURN_IF_ERROR(status);
    return std::move(result);
  });
}

}  // namespace kiln::interpreter
