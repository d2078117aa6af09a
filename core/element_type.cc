#include "core/element_type.h"

#include <array>
#include <utility>

namespace kiln {
namespace {

constexpr std::array<std::pair<ElementType, std::string_view>, 18> kNames = {{
    {ElementType::kInvalid, "invalid"},
    {ElementType::kPred, "pred"},
    {ElementType::kS8, "s8"},
    {ElementType::kS16, "s16"},
    {ElementType::kS32, "s32"},
    {ElementType::kS64, "s64"},
    {ElementType::kU8, "u8"},
    {ElementType::kU16, "u16"},
    {ElementType::kU32, "u32"},
    {ElementType::kU64, "u64"},
    {ElementType::kF16, "f16"},
    {ElementType::kBF16, "bf16"},
    {ElementType::kF32, "f32"},
    {ElementType::kF64, "f64"},
    {ElementType::kC64, "c64"},
    {ElementType::kC128, "c128"},
    {ElementType::kTuple, "tuple"},
    {ElementType::kToken, "token"},
}};

}  // namespace

std::string_view ElementTypeName(ElementType type) {
  for (const auto& [t, name] : kNames) {
    if (t == type) return name;
  }
  return "invalid";
}

std::optional<ElementType> ElementTypeFromName(std::string_view name) {
  for (const auto& [t, n] : kNames) {
    if (n == name && t != ElementType::kInvalid) return t;
  }
  return std::nullopt;
}

bool IsArrayType(ElementType type) {
  return type != ElementType::kInvalid && type != ElementType::kTuple && type != ElementType::kToken;
}

bool IsSignedIntegral(ElementType type) {
  return type == ElementType::kS8 || type == ElementType::kS16 || type == ElementType::kS32 ||
         type == ElementType::kS64;
}

bool IsUnsignedIntegral(ElementType type) {
  return type == ElementType::kU8 || type == ElementType::kU16 || type == ElementType::kU32 ||
         type == ElementType::kU64;
}

bool IsIntegral(ElementType type) { return IsSignedIntegral(type) || IsUnsignedIntegral(type); }

bool IsFloating(ElementType type) {
  return type == ElementType::kF16 || type == ElementType::kBF16 || type == ElementType::kF32 ||
         type == ElementType::kF64;
}

bool IsComplex(ElementType type) { return type == ElementType::kC64 || type == ElementType::kC128; }

int BitWidth(ElementType type) {
  switch (type) {
    case ElementType::kPred: return 8;
    case ElementType::kS8:
    case ElementType::kU8: return 8;
    case ElementType::kS16:
    case ElementType::kU16:
    case ElementType::kF16:
    case ElementType::kBF16: return 16;
    case ElementType::kS32:
    case ElementType::kU32:
    case ElementType::kF32: return 32;
    case ElementType::kS64:
    case ElementType::kU64:
    case ElementType::kF64:
    case ElementType::kC64: return 64;
    case ElementType::kC128: return 128;
    default: return 0;
  }
}

int ByteWidth(ElementType type) { return BitWidth(type) / 8; }

ElementType ComplexComponentType(ElementType type) {
  if (type == ElementType::kC64) return ElementType::kF32;
  if (type == ElementType::kC128) return ElementType::kF64;
  return type;
}

int MantissaBits(ElementType type) {
  switch (type) {
    case ElementType::kF16: return 10;
    case ElementType::kBF16: return 7;
    case ElementType::kF32: return 23;
    case ElementType::kF64: return 52;
    default: return 0;
  }
}

int ExponentBits(ElementType type) {
  switch (type) {
    case ElementType::kF16: return 5;
    case ElementType::kBF16: return 8;
    case ElementType::kF32: return 8;
    case ElementType::kF64: return 11;
    default: return 0;
  }
}

}  // namespace kiln
