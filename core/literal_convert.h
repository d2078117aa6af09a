// Element conversion with XLA `convert` semantics, usable by the interpreter
// and by literal utilities alike.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/element_type.h"

namespace kiln {
namespace convert_detail {

template <typename T>
struct IsComplexT : std::false_type {};
template <typename T>
struct IsComplexT<std::complex<T>> : std::true_type {};

template <typename T>
constexpr bool kIsLowFloat = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

// Real value of any element as the widest type of its family.
template <typename From>
auto Widen(From value) {
  if constexpr (IsComplexT<From>::value) {
    return std::complex<double>(value.real(), value.imag());
  } else if constexpr (kIsLowFloat<From>) {
    return static_cast<double>(static_cast<float>(value));
  } else if constexpr (std::is_same_v<From, bool>) {
    return static_cast<int64_t>(value ? 1 : 0);
  } else {
    return value;
  }
}

template <typename To>
To FromDouble(double value) {
  if constexpr (std::is_same_v<To, bool>) {
    return value != 0.0;
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(value);
  } else if constexpr (kIsLowFloat<To>) {
    // Round directly from double only when float is exact; double->float->half
    // can double-round, so use float for f32-representable values.
    return To(static_cast<float>(value));
  } else if constexpr (IsComplexT<To>::value) {
    return To(static_cast<typename To::value_type>(value), 0);
  } else {
    // float -> integer: NaN -> 0, saturate to the range.
    if (std::isnan(value)) return To{0};
    if (value <= static_cast<double>(std::numeric_limits<To>::lowest()))
      return std::numeric_limits<To>::lowest();
    if (value >= static_cast<double>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(value);
  }
}

}  // namespace convert_detail

template <typename To, typename From>
To ConvertElement(From value) {
  using namespace convert_detail;
  if constexpr (std::is_same_v<To, From>) {
    return value;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (IsComplexT<From>::value) {
      return value != From(0);
    } else if constexpr (kIsLowFloat<From>) {
      return static_cast<float>(value) != 0.0f;
    } else {
      return value != From(0);
    }
  } else if constexpr (IsComplexT<From>::value) {
    // complex -> real keeps the real part (XLA requires real()/imag(), but a
    // complex->complex convert is legal).
    if constexpr (IsComplexT<To>::value) {
      return To(static_cast<typename To::value_type>(value.real()),
                static_cast<typename To::value_type>(value.imag()));
    } else {
      return FromDouble<To>(static_cast<double>(value.real()));
    }
  } else if constexpr (std::is_integral_v<From> || std::is_same_v<From, bool>) {
    const auto wide = Widen(value);
    if constexpr (std::is_integral_v<To>) {
      return static_cast<To>(wide);  // two's-complement wrap, as XLA does
    } else if constexpr (std::is_floating_point_v<To>) {
      return static_cast<To>(wide);  // round to nearest even
    } else if constexpr (kIsLowFloat<To>) {
      // Round once: via float is exact for |x| < 2^24, and beyond that float
      // rounding then half rounding could double-round only past half's range.
      return To(static_cast<float>(wide));
    } else {
      return To(static_cast<typename To::value_type>(wide), 0);
    }
  } else {
    // From is a real float type.
    if constexpr (kIsLowFloat<To> && std::is_same_v<From, float>) {
      return To(value);
    } else if constexpr (kIsLowFloat<To> && kIsLowFloat<From>) {
      return To(static_cast<float>(value));
    } else {
      return FromDouble<To>(static_cast<double>(Widen(value)));
    }
  }
}

}  // namespace kiln
