// Scalar semantics of XLA's elementwise ops, one function per op, templated
// on the C++ element type. Elementwise kernels and the fast paths of reducers
// share them so that an op means the same thing everywhere in the interpreter.
#pragma once

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "core/element_type.h"
#include "core/literal_convert.h"
#include "core/opcode.h"
#include "core/status.h"

namespace kiln::interpreter {

template <typename T>
constexpr bool kIsComplex = convert_detail::IsComplexT<T>::value;
template <typename T>
constexpr bool kIsLowFloat = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;
template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<T> || kIsLowFloat<T>;
template <typename T>
constexpr bool kIsPred = std::is_same_v<T, bool>;
template <typename T>
constexpr bool kIsInt = std::is_integral_v<T> && !kIsPred<T>;

// The type arithmetic on T is carried out in: f16/bf16 compute in float and
// round once at the end, like XLA's CPU backend.
template <typename T>
using ComputeType = std::conditional_t<kIsLowFloat<T>, float, T>;

// Unsigned type at least as wide as int, so integer arithmetic wraps instead
// of overflowing (signed overflow and int promotion of u16*u16 are UB).
template <typename T>
using WrapType = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <typename T>
bool IsNan(T value) {
  if constexpr (kIsFloat<T>)
    return std::isnan(static_cast<ComputeType<T>>(value));
  else if constexpr (kIsComplex<T>)
    return std::isnan(value.real()) || std::isnan(value.imag());
  else
    return false;
}

template <typename T>
T Wide(ComputeType<T> value) {
  return static_cast<T>(value);
}

template <typename T>
T AddOp(T a, T b) {
  if constexpr (kIsPred<T>)
    return a || b;
  else if constexpr (kIsInt<T>)
    return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
  else
    return a + b;
}
template <typename T>
T SubtractOp(T a, T b) {
  if constexpr (kIsPred<T>)
    return a != b;
  else if constexpr (kIsInt<T>)
    return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
  else
    return a - b;
}
template <typename T>
T MultiplyOp(T a, T b) {
  if constexpr (kIsPred<T>)
    return a && b;
  else if constexpr (kIsInt<T>)
    return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
  else
    return a * b;
}
// XLA: x / 0 is -1 (all bits set), INT_MIN / -1 is INT_MIN.
template <typename T>
T DivideOp(T a, T b) {
  if constexpr (kIsPred<T>) {
    return a;
  } else if constexpr (kIsInt<T>) {
    if (b == 0) return static_cast<T>(-1);
    if constexpr (std::is_signed_v<T>) {
      if (a == std::numeric_limits<T>::min() && b == -1) return a;
    }
    return static_cast<T>(a / b);
  } else {
    return a / b;
  }
}
// XLA: x % 0 is x, INT_MIN % -1 is 0; floats take the sign of the dividend.
template <typename T>
T RemainderOp(T a, T b) {
  if constexpr (kIsInt<T>) {
    if (b == 0) return a;
    if constexpr (std::is_signed_v<T>) {
      if (a == std::numeric_limits<T>::min() && b == -1) return 0;
    }
    return static_cast<T>(a % b);
  } else if constexpr (kIsFloat<T>) {
    return static_cast<T>(std::fmod(static_cast<ComputeType<T>>(a), static_cast<ComputeType<T>>(b)));
  } else {
    return T{};
  }
}
// NaN in either operand gives NaN, as XLA does.
template <typename T>
T MaximumOp(T a, T b) {
  if constexpr (kIsFloat<T>) {
    if (IsNan(a)) return a;
    if (IsNan(b)) return b;
  }
  if constexpr (kIsComplex<T>)
    return T{};
  else
    return a > b ? a : b;
}
template <typename T>
T MinimumOp(T a, T b) {
  if constexpr (kIsFloat<T>) {
    if (IsNan(a)) return a;
    if (IsNan(b)) return b;
  }
  if constexpr (kIsComplex<T>)
    return T{};
  else
    return a < b ? a : b;
}
// Integer pow by squaring with wrap-around; a negative exponent gives 0 except
// for base 1 (as XLA's elemental emitter does).
template <typename T>
T PowerOp(T a, T b) {
  if constexpr (kIsPred<T>) {
    return a || !b;
  } else if constexpr (kIsInt<T>) {
    if (a == 1 || b == 0) return 1;
    if constexpr (std::is_signed_v<T>) {
      if (b < 0) return 0;
    }
    WrapType<T> result = 1;
    WrapType<T> base = static_cast<WrapType<T>>(a);
    auto exponent = static_cast<std::make_unsigned_t<T>>(b);
    while (exponent != 0) {
      if (exponent & 1) result = static_cast<WrapType<T>>(result * base);
      base = static_cast<WrapType<T>>(base * base);
      exponent >>= 1;
    }
    return static_cast<T>(result);
  } else if constexpr (kIsComplex<T>) {
    if (a == T(0) && b == T(0)) return T(1);
    return std::pow(a, b);
  } else {
    return static_cast<T>(std::pow(static_cast<ComputeType<T>>(a), static_cast<ComputeType<T>>(b)));
  }
}
template <typename T>
T Atan2Op(T a, T b) {
  if constexpr (kIsFloat<T>) {
    return static_cast<T>(std::atan2(static_cast<ComputeType<T>>(a), static_cast<ComputeType<T>>(b)));
  } else {
    return T{};
  }
}
template <typename T>
T AndOp(T a, T b) {
  if constexpr (kIsPred<T>)
    return a && b;
  else if constexpr (kIsInt<T>)
    return static_cast<T>(a & b);
  else
    return T{};
}
template <typename T>
T OrOp(T a, T b) {
  if constexpr (kIsPred<T>)
    return a || b;
  else if constexpr (kIsInt<T>)
    return static_cast<T>(a | b);
  else
    return T{};
}
template <typename T>
T XorOp(T a, T b) {
  if constexpr (kIsPred<T>)
    return a != b;
  else if constexpr (kIsInt<T>)
    return static_cast<T>(a ^ b);
  else
    return T{};
}
// Shift amounts are unsigned; amounts >= the bit width shift everything out.
template <typename T>
T ShiftLeftOp(T a, T b) {
  if constexpr (kIsInt<T>) {
    using U = std::make_unsigned_t<T>;
    if (static_cast<U>(b) >= sizeof(T) * 8) return 0;
    return static_cast<T>(static_cast<WrapType<T>>(static_cast<U>(a)) << static_cast<U>(b));
  } else {
    return T{};
  }
}
template <typename T>
T ShiftRightLogicalOp(T a, T b) {
  if constexpr (kIsInt<T>) {
    using U = std::make_unsigned_t<T>;
    if (static_cast<U>(b) >= sizeof(T) * 8) return 0;
    return static_cast<T>(static_cast<U>(a) >> static_cast<U>(b));
  } else {
    return T{};
  }
}
template <typename T>
T ShiftRightArithmeticOp(T a, T b) {
  if constexpr (kIsInt<T>) {
    using U = std::make_unsigned_t<T>;
    using S = std::make_signed_t<T>;
    const S value = static_cast<S>(a);
    if (static_cast<U>(b) >= sizeof(T) * 8) return static_cast<T>(value < 0 ? S(-1) : S(0));
    return static_cast<T>(static_cast<S>(value >> static_cast<U>(b)));
  } else {
    return T{};
  }
}

// Whether binary `opcode` is defined for element type T.
template <typename T>
bool BinaryOpApplies(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kDivide:
    case Opcode::kPower: return !kIsPred<T>;
    case Opcode::kRemainder: return kIsInt<T> || kIsFloat<T>;
    case Opcode::kMaximum:
    case Opcode::kMinimum: return !kIsComplex<T>;
    case Opcode::kAtan2: return kIsFloat<T>;
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor: return kIsInt<T> || kIsPred<T>;
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightLogical:
    case Opcode::kShiftRightArithmetic: return kIsInt<T>;
    default: return false;
  }
}

// Calls `fn(op)` where `op` is a callable `T(T, T)` implementing binary
// `opcode`; returns UNIMPLEMENTED for an op that does not apply to T.
template <typename T, typename Fn>
Status WithBinaryOp(Opcode opcode, Fn&& fn) {
  if (!BinaryOpApplies<T>(opcode)) {
    return Unimplemented(OpcodeName(opcode), " is not defined for element type ",
                         ElementTypeName(TypeOf<T>::value));
  }
  switch (opcode) {
    case Opcode::kAdd: fn([](T a, T b) { return AddOp(a, b); }); break;
    case Opcode::kSubtract: fn([](T a, T b) { return SubtractOp(a, b); }); break;
    case Opcode::kMultiply: fn([](T a, T b) { return MultiplyOp(a, b); }); break;
    case Opcode::kDivide: fn([](T a, T b) { return DivideOp(a, b); }); break;
    case Opcode::kRemainder: fn([](T a, T b) { return RemainderOp(a, b); }); break;
    case Opcode::kMaximum: fn([](T a, T b) { return MaximumOp(a, b); }); break;
    case Opcode::kMinimum: fn([](T a, T b) { return MinimumOp(a, b); }); break;
    case Opcode::kPower: fn([](T a, T b) { return PowerOp(a, b); }); break;
    case Opcode::kAtan2: fn([](T a, T b) { return Atan2Op(a, b); }); break;
    case Opcode::kAnd: fn([](T a, T b) { return AndOp(a, b); }); break;
    case Opcode::kOr: fn([](T a, T b) { return OrOp(a, b); }); break;
    case Opcode::kXor: fn([](T a, T b) { return XorOp(a, b); }); break;
    case Opcode::kShiftLeft: fn([](T a, T b) { return ShiftLeftOp(a, b); }); break;
    case Opcode::kShiftRightLogical: fn([](T a, T b) { return ShiftRightLogicalOp(a, b); }); break;
    case Opcode::kShiftRightArithmetic: fn([](T a, T b) { return ShiftRightArithmeticOp(a, b); }); break;
    default: break;
  }
  return OkStatus();
}

}  // namespace kiln::interpreter
