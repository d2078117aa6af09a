// Element types as XLA names them, and the C++ types that hold their values.
#pragma once

#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <Eigen/Core>

namespace kiln {

// Numeric values match the C ABI's KILN_TYPE_* constants; never renumber.
enum class ElementType : int {
  kInvalid = 0,
  kPred = 1,
  kS8 = 2,
  kS16 = 3,
  kS32 = 4,
  kS64 = 5,
  kU8 = 6,
  kU16 = 7,
  kU32 = 8,
  kU64 = 9,
  kF16 = 10,
  kBF16 = 11,
  kF32 = 12,
  kF64 = 13,
  kC64 = 14,
  kC128 = 15,
  kTuple = 16,
  kToken = 17,
};

using half = Eigen::half;
using bfloat16 = Eigen::bfloat16;
using complex64 = std::complex<float>;
using complex128 = std::complex<double>;

// Lower-case HLO spelling: "pred", "s32", "bf16", "c64", "token"...
std::string_view ElementTypeName(ElementType type);
std::optional<ElementType> ElementTypeFromName(std::string_view name);

bool IsArrayType(ElementType type);  // everything but tuple, token, invalid
bool IsIntegral(ElementType type);   // signed or unsigned integers (not pred)
bool IsSignedIntegral(ElementType type);
bool IsUnsignedIntegral(ElementType type);
bool IsFloating(ElementType type);  // f16, bf16, f32, f64
bool IsComplex(ElementType type);
int ByteWidth(ElementType type);  // 0 for tuple/token/invalid
int BitWidth(ElementType type);
// For c64 -> f32, c128 -> f64; identity otherwise.
ElementType ComplexComponentType(ElementType type);
// Significand bits (without the implicit bit) and exponent bits of a float type.
int MantissaBits(ElementType type);
int ExponentBits(ElementType type);

// Maps a C++ value type to its ElementType.
// clang-format off
template <typename T> struct TypeOf;
template <> struct TypeOf<bool> { static constexpr ElementType value = ElementType::kPred; };
template <> struct TypeOf<int8_t> { static constexpr ElementType value = ElementType::kS8; };
template <> struct TypeOf<int16_t> { static constexpr ElementType value = ElementType::kS16; };
template <> struct TypeOf<int32_t> { static constexpr ElementType value = ElementType::kS32; };
template <> struct TypeOf<int64_t> { static constexpr ElementType value = ElementType::kS64; };
template <> struct TypeOf<uint8_t> { static constexpr ElementType value = ElementType::kU8; };
template <> struct TypeOf<uint16_t> { static constexpr ElementType value = ElementType::kU16; };
template <> struct TypeOf<uint32_t> { static constexpr ElementType value = ElementType::kU32; };
template <> struct TypeOf<uint64_t> { static constexpr ElementType value = ElementType::kU64; };
template <> struct TypeOf<half> { static constexpr ElementType value = ElementType::kF16; };
template <> struct TypeOf<bfloat16> { static constexpr ElementType value = ElementType::kBF16; };
template <> struct TypeOf<float> { static constexpr ElementType value = ElementType::kF32; };
template <> struct TypeOf<double> { static constexpr ElementType value = ElementType::kF64; };
template <> struct TypeOf<complex64> { static constexpr ElementType value = ElementType::kC64; };
template <> struct TypeOf<complex128> { static constexpr ElementType value = ElementType::kC128; };
// clang-format on

// Calls `fn(T{})` with the C++ type of an array element type, returning its
// result. PRED maps to bool (stored as one byte). Returns `fn` applied to an
// `int32_t` tag never: callers must check IsArrayType first.
template <typename Fn>
decltype(auto) DispatchElementType(ElementType type, Fn&& fn) {
  switch (type) {
    case ElementType::kPred: return fn(bool{});
    case ElementType::kS8: return fn(int8_t{});
    case ElementType::kS16: return fn(int16_t{});
    case ElementType::kS32: return fn(int32_t{});
    case ElementType::kS64: return fn(int64_t{});
    case ElementType::kU8: return fn(uint8_t{});
    case ElementType::kU16: return fn(uint16_t{});
    case ElementType::kU32: return fn(uint32_t{});
    case ElementType::kU64: return fn(uint64_t{});
    case ElementType::kF16: return fn(half{});
    case ElementType::kBF16: return fn(bfloat16{});
    case ElementType::kF32: return fn(float{});
    case ElementType::kF64: return fn(double{});
    case ElementType::kC64: return fn(complex64{});
    case ElementType::kC128: return fn(complex128{});
    default: break;
  }
  // Unreachable for array types; treat anything else as bytes.
  return fn(uint8_t{});
}

}  // namespace kiln
