// Elementwise ops whose operand and result types differ or that take three
// operands: select, clamp, compare, convert, bitcast-convert, complex,
// real/imag, is-finite, reduce-precision.
#include <cstring>

#include "core/interpreter/kernels.h"
#include "core/interpreter/scalar_ops.h"

namespace kiln::interpreter {
namespace {

// Element i of a literal that is either scalar (broadcast) or full-size.
template <typename T>
struct Broadcasted {
  std::span<const T> data;
  bool scalar;
  T operator[](size_t i) const { return data[scalar ? 0 : i]; }
};

template <typename T>
StatusOr<Broadcasted<T>> View(const Literal& literal, int64_t count, const char* op, const char* what) {
  if (literal.shape().element_type() != TypeOf<T>::value) {
    return InvalidArgument(op, " ", what, " has element type ",
                           ElementTypeName(literal.shape().element_type()), ", expected ",
                           ElementTypeName(TypeOf<T>::value));
  }
  if (literal.element_count() == count) return Broadcasted<T>{literal.data<T>(), false};
  if (literal.element_count() == 1) return Broadcasted<T>{literal.data<T>(), true};
  return InvalidArgument(op, " ", what, " ", literal.shape().ToString(), " does not match ", count,
                         " result elements");
}

// Orders floats totally: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
template <typename T>
int64_t TotalOrderKey(T value) {
  if constexpr (kIsFloat<T>) {
    using Bits =
        std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
    Bits bits;
    std::memcpy(&bits, &value, sizeof(T));
    const Bits sign = Bits(1) << (sizeof(T) * 8 - 1);
    const auto magnitude = static_cast<int64_t>(bits & static_cast<Bits>(~sign));
    return (bits & sign) ? -magnitude - 1 : magnitude;
  } else {
    return 0;
  }
}

template <typename T>
bool CompareScalars(T a, T b, ComparisonDirection direction, bool total_order) {
  if constexpr (kIsComplex<T>) {
    return direction == ComparisonDirection::kEq ? a == b : a != b;
  } else {
    if constexpr (kIsFloat<T>) {
      if (total_order) return CompareScalars<int64_t>(TotalOrderKey(a), TotalOrderKey(b), direction, false);
    }
    switch (direction) {
      case ComparisonDirection::kEq: return a == b;
      case ComparisonDirection::kNe: return a != b;
      case ComparisonDirection::kGe: return a >= b;
      case ComparisonDirection::kGt: return a > b;
      case ComparisonDirection::kLe: return a <= b;
      case ComparisonDirection::kLt: return a < b;
    }
    return false;
  }
}

// XLA's reduce-precision on the bits of a float/double: round the mantissa to
// nearest even, then flush exponents out of range to zero or infinity.
template <typename Float, typename Bits>
Float ReducePrecisionValue(Float value, int exponent_bits, int mantissa_bits) {
  constexpr int kBits = sizeof(Bits) * 8;
  constexpr int kSourceMantissa = std::numeric_limits<Float>::digits - 1;
  constexpr int kSourceExponent = kBits - kSourceMantissa - 1;
  Bits bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if (mantissa_bits < kSourceMantissa) {
    const int dropped = kSourceMantissa - mantissa_bits;
    const Bits last_kept_bit = Bits(1) << dropped;
    const Bits base_bias = (last_kept_bit >> 1) - 1;
    const Bits bias = ((bits & last_kept_bit) >> dropped) + base_bias;
    const Bits truncation_mask = static_cast<Bits>(~(last_kept_bit - 1));
    bits = static_cast<Bits>((bits + bias) & truncation_mask);
  }
  if (exponent_bits < kSourceExponent) {
    const Bits sign_mask = Bits(1) << (kBits - 1);
    const Bits exponent_mask = ((Bits(1) << kSourceExponent) - 1) << kSourceMantissa;
    const int64_t exponent_bias = (int64_t{1} << (kSourceExponent - 1)) - 1;
    const int64_t reduced_bias = (int64_t{1} << (exponent_bits - 1)) - 1;
    const auto max_exponent = static_cast<Bits>(exponent_bias + reduced_bias);
    const auto min_exponent = static_cast<Bits>(exponent_bias - reduced_bias);
    const Bits exponent = bits & exponent_mask;
    const Bits signed_zero = bits & sign_mask;
    if (exponent > (max_exponent << kSourceMantissa)) {
      bits = signed_zero | exponent_mask;
    } else if (exponent <= (min_exponent << kSourceMantissa)) {
      bits = signed_zero;
    }
  }
  Float reduced;
  std::memcpy(&reduced, &bits, sizeof(bits));
  if (std::isnan(value)) return mantissa_bits > 0 ? value : std::numeric_limits<Float>::infinity();
  return reduced;
}

}  // namespace

StatusOr<Literal> EvaluateSelect(const Instruction& instruction, Operands operands) {
  Literal result(instruction.shape);
  const int64_t count = result.element_count();
  const Literal& predicate = *operands[0];
  if (!instruction.shape.IsArray()) {
    // Tuple select with a scalar predicate (legacy form): pick a whole operand.
    if (predicate.element_count() != 1) return InvalidArgument("tuple select needs a scalar predicate");
    return predicate.data<bool>()[0] ? *operands[1] : *operands[2];
  }
  return DispatchElementType(instruction.shape.element_type(), [&](auto tag) -> StatusOr<Literal> {
    using T = decltype(tag);
    KILN_ASSIGN_OR_RETURN(auto pred, View<bool>(predicate, count, "select", "predicate"));
    KILN_ASSIGN_OR_RETURN(auto on_true, View<T>(*operands[1], count, "select", "on_true"));
    KILN_ASSIGN_OR_RETURN(auto on_false, View<T>(*operands[2], count, "select", "on_false"));
    auto out = result.data<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = pred[i] ? on_true[i] : on_false[i];
    return std::move(result);
  });
}

StatusOr<Literal> EvaluateClamp(const Instruction& instruction, Operands operands) {
  Literal result(instruction.shape);
  const int64_t count = result.element_count();
  return DispatchElementType(instruction.shape.element_type(), [&](auto tag) -> StatusOr<Literal> {
    using T = decltype(tag);
    if constexpr (kIsComplex<T>) {
      return InvalidArgument("clamp is not defined for complex types");
    } else {
      KILN_ASSIGN_OR_RETURN(auto low, View<T>(*operands[0], count, "clamp", "min"));
      KILN_ASSIGN_OR_RETURN(auto value, View<T>(*operands[1], count, "clamp", "operand"));
      KILN_ASSIGN_OR_RETURN(auto high, View<T>(*operands[2], count, "clamp", "max"));
      auto out = result.data<T>();
      for (size_t i = 0; i < out.size(); ++i) out[i] = MinimumOp(MaximumOp(value[i], low[i]), high[i]);
      return std::move(result);
    }
  });
}

StatusOr<Literal> EvaluateCompare(const Instruction& instruction, Operands operands) {
  Literal result(instruction.shape);
  const int64_t count = result.element_count();
  const ElementType type = operands[0]->shape().element_type();
  const ComparisonDirection direction = instruction.attrs.comparison_direction;
  const bool total_order = instruction.attrs.comparison_type == ComparisonType::kTotalOrder;
  if (IsComplex(type) && direction != ComparisonDirection::kEq && direction != ComparisonDirection::kNe) {
    return InvalidArgument("compare of complex values supports only EQ and NE");
  }
  return DispatchElementType(type, [&](auto tag) -> StatusOr<Literal> {
    using T = decltype(tag);
    KILN_ASSIGN_OR_RETURN(auto lhs, View<T>(*operands[0], count, "compare", "lhs"));
    KILN_ASSIGN_OR_RETURN(auto rhs, View<T>(*operands[1], count, "compare", "rhs"));
    auto out = result.data<bool>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = CompareScalars(lhs[i], rhs[i], direction, total_order);
    return std::move(result);
  });
}

StatusOr<Literal> EvaluateConvert(const Instruction& instruction, Operands operands) {
  const ElementType to = instruction.shape.element_type();
  if (!IsArrayType(to)) return InvalidArgument("convert to ", instruction.shape.ToString());
  return operands[0]->Convert(to);
}

StatusOr<Literal> EvaluateBitcastConvert(const Instruction& instruction, Operands operands) {
  Literal result(instruction.shape);
  const Literal& input = *operands[0];
  // Literals are dense row-major, so every legal bitcast-convert (including
  // width-changing ones that add or drop a minor dimension) is a byte copy.
  if (result.raw().size() != input.raw().size()) {
    return InvalidArgument("bitcast-convert from ", input.shape().ToString(), " to ",
                           instruction.shape.ToString(), " changes the byte size");
  }
  if (!result.raw().empty()) std::memcpy(result.raw().data(), input.raw().data(), result.raw().size());
  return result;
}

StatusOr<Literal> EvaluateComplex(const Instruction& instruction, Operands operands) {
  Literal result(instruction.shape);
  const int64_t count = result.element_count();
  return DispatchElementType(instruction.shape.element_type(), [&](auto tag) -> StatusOr<Literal> {
    using T = decltype(tag);
    if constexpr (kIsComplex<T>) {
      using R = typename T::value_type;
      KILN_ASSIGN_OR_RETURN(auto real, View<R>(*operands[0], count, "complex", "real part"));
      KILN_ASSIGN_OR_RETURN(auto imag, View<R>(*operands[1], count, "complex", "imaginary part"));
      auto out = result.data<T>();
      for (size_t i = 0; i < out.size(); ++i) out[i] = T(real[i], imag[i]);
      return std::move(result);
    } else {
      return InvalidArgument("complex must produce c64 or c128, got ", instruction.shape.ToString());
    }
  });
}

StatusOr<Literal> EvaluateRealImag(const Instruction& instruction, Operands operands) {
  const Literal& input = *operands[0];
  const bool real = instruction.opcode == Opcode::kReal;
  Literal result(instruction.shape);
  return DispatchElementType(input.shape().element_type(), [&](auto tag) -> StatusOr<Literal> {
    using T = decltype(tag);
    if constexpr (kIsComplex<T>) {
      using R = typename T::value_type;
      if (instruction.shape.element_type() != TypeOf<R>::value) {
        return InvalidArgument(OpcodeName(instruction.opcode), " result type mismatch");
      }
      auto in = input.data<T>();
      auto out = result.data<R>();
      for (size_t i = 0; i < out.size(); ++i) out[i] = real ? in[i].real() : in[i].imag();
    } else {
      // Real of a real value is itself; its imaginary part is zero.
      if (real) return input;
    }
    return std::move(result);
  });
}

StatusOr<Literal> EvaluateIsFinite(const Instruction& instruction, Operands operands) {
  const Literal& input = *operands[0];
  Literal result(instruction.shape);
  return DispatchElementType(input.shape().element_type(), [&](auto tag) -> StatusOr<Literal> {
    using T = decltype(tag);
    if constexpr (kIsFloat<T>) {
      auto in = input.data<T>();
      auto out = result.data<bool>();
      for (size_t i = 0; i < out.size(); ++i) out[i] = std::isfinite(static_cast<ComputeType<T>>(in[i]));
      return std::move(result);
    } else {
      return InvalidArgument("is-finite needs a floating-point operand, got ", input.shape().ToString());
    }
  });
}

StatusOr<Literal> EvaluateReducePrecision(const Instruction& instruction, Operands operands) {
  const Literal& input = *operands[0];
  const int64_t exponent_bits = instruction.attrs.exponent_bits;
  const int64_t mantissa_bits = instruction.attrs.mantissa_bits;
  if (exponent_bits < 1 || mantissa_bits < 0) {
    return InvalidArgument("reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0, got ",
                           exponent_bits, " and ", mantissa_bits);
  }
  Literal result(instruction.shape);
  return DispatchElementType(input.shape().element_type(), [&](auto tag) -> StatusOr<Literal> {
    using T = decltype(tag);
    if constexpr (kIsFloat<T>) {
      auto in = input.data<T>();
      auto out = result.data<T>();
      const int e = static_cast<int>(std::min<int64_t>(exponent_bits, 64));
      const int m = static_cast<int>(std::min<int64_t>(mantissa_bits, 64));
      for (size_t i = 0; i < out.size(); ++i) {
        if constexpr (std::is_same_v<T, double>) {
          out[i] = ReducePrecisionValue<double, uint64_t>(in[i], e, m);
        } else {
          // f16/bf16 values are exact in f32, so reducing there is exact too.
          out[i] = static_cast<T>(ReducePrecisionValue<float, uint32_t>(static_cast<float>(in[i]), e, m));
        }
      }
      return std::move(result);
    } else {
      return InvalidArgument("reduce-precision needs a floating-point operand, got ",
                             input.shape().ToString());
    }
  });
}

}  // namespace kiln::interpreter
