#include "backends/vulkan/glsl_types.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace kiln::vulkan {
namespace {

// f32 -> f16 bits, rounding to nearest even, with subnormals, infinities and
// NaN (quiet, payload kept) done in integer arithmetic: no device float16
// support or rounding mode is involved.
constexpr const char* kF32ToF16 = R"(uint k_f2h(float f) {
  uint x = floatBitsToUint(f);
  uint s = (x >> 16) & 0x8000u;
  uint a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return s | 0x7e00u | ((a >> 13) & 0x3ffu);
  if (a >= 0x477ff000u) return s | 0x7c00u;
  if (a >= 0x38800000u) {
    uint r = a - 0x38000000u;
    r = r + 0xfffu + ((r >> 13) & 1u);
    return s | (r >> 13);
  }
  if (a < 0x33000000u) return s;
  uint e = a >> 23;
  uint m = (a & 0x7fffffu) | 0x800000u;
  uint shift = 126u - e;
  uint q = m >> shift;
  uint rem = m & ((1u << shift) - 1u);
  uint half_unit = 1u << (shift - 1u);
  if (rem > half_unit || (rem == half_unit && (q & 1u) != 0u)) q += 1u;
  return s | q;
}
)";

constexpr const char* kF16ToF32 = R"(float k_h2f(uint h) {
  uint s = (h & 0x8000u) << 16;
  uint e = (h >> 10) & 0x1fu;
  uint m = h & 0x3ffu;
  if (e == 31u) return uintBitsToFloat(s | 0x7f800000u | (m << 13));
  if (e == 0u) {
    float v = float(m) * 5.9604644775390625e-8;
    return s != 0u ? -v : v;
  }
  return uintBitsToFloat(s | ((e + 112u) << 23) | (m << 13));
}
)";

// f32 -> bf16 bits: round to nearest even; NaN becomes the quiet NaN of its
// sign, as Eigen's bfloat16 (the interpreter's type) does.
constexpr const char* kF32ToBf16 = R"(uint k_f2bf(float f) {
  uint x = floatBitsToUint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return ((x >> 16) & 0x8000u) | 0x7fc0u;
  return (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
}
)";

}  // namespace

void GlslPrelude::NeedExtension(const std::string& extension) {
  if (std::find(extensions_.begin(), extensions_.end(), extension) == extensions_.end())
    extensions_.push_back(extension);
}

const std::string& GlslPrelude::Helper(const std::string& name, const std::string& definition) {
  auto it = std::find(helper_names_.begin(), helper_names_.end(), name);
  if (it != helper_names_.end()) return *it;
  helper_names_.push_back(name);
  helpers_.push_back(definition);
  return helper_names_.back();
}

void GlslPrelude::Absorb(const GlslPrelude& other) {
  for (const std::string& extension : other.extensions_) NeedExtension(extension);
  for (size_t i = 0; i < other.helper_names_.size(); ++i) Helper(other.helper_names_[i], other.helpers_[i]);
}

std::string GlslPrelude::Extensions() const {
  std::string text;
  for (const std::string& extension : extensions_) text += "#extension " + extension + " : require\n";
  return text;
}

std::string GlslPrelude::Helpers() const {
  std::string text;
  for (const std::string& helper : helpers_) text += helper;
  return text;
}

std::string GlslValueType(ElementType type) {
  switch (type) {
    case ElementType::kPred: return "bool";
    case ElementType::kS8:
    case ElementType::kS16:
    case ElementType::kS32: return "int";
    case ElementType::kU8:
    case ElementType::kU16:
    case ElementType::kU32: return "uint";
    case ElementType::kS64: return "int64_t";
    case ElementType::kU64: return "uint64_t";
    case ElementType::kF16:
    case ElementType::kBF16:
    case ElementType::kF32: return "float";
    case ElementType::kF64: return "double";
    case ElementType::kC64: return "vec2";
    case ElementType::kC128: return "dvec2";
    default: return "void";
  }
}

std::string GlslStorageType(ElementType type) {
  switch (type) {
    case ElementType::kPred:
    case ElementType::kU8: return "uint8_t";
    case ElementType::kS8: return "int8_t";
    case ElementType::kS16: return "int16_t";
    case ElementType::kU16:
    case ElementType::kF16:
    case ElementType::kBF16: return "uint16_t";
    default: return GlslValueType(type);
  }
}

Status CheckElementType(ElementType type, const ShaderFeatures& features) {
  auto missing = [&](const char* feature) {
    return Unimplemented("element type ", ElementTypeName(type), " needs the device feature ", feature,
                         ", which this device lacks");
  };
  switch (type) {
    case ElementType::kPred:
    case ElementType::kS8:
    case ElementType::kU8:
      if (!features.storage8) return missing("storage8 (storageBuffer8BitAccess)");
      return OkStatus();
    case ElementType::kS16:
    case ElementType::kU16:
    case ElementType::kF16:
    case ElementType::kBF16:
      if (!features.storage16) return missing("storage16 (storageBuffer16BitAccess)");
      return OkStatus();
    case ElementType::kS64:
    case ElementType::kU64:
      if (!features.i64) return missing("i64 (shaderInt64)");
      return OkStatus();
    case ElementType::kF64:
    case ElementType::kC128:
      if (!features.f64) return missing("f64 (shaderFloat64)");
      return OkStatus();
    case ElementType::kS32:
    case ElementType::kU32:
    case ElementType::kF32:
    case ElementType::kC64: return OkStatus();
    default: return Unimplemented("element type ", ElementTypeName(type), " is not an array element type");
  }
}

void NeedTypeExtensions(ElementType type, GlslPrelude& prelude) {
  switch (type) {
    case ElementType::kPred:
    case ElementType::kS8:
    case ElementType::kU8: prelude.NeedExtension("GL_EXT_shader_8bit_storage"); break;
    case ElementType::kS16:
    case ElementType::kU16:
    case ElementType::kF16:
    case ElementType::kBF16: prelude.NeedExtension("GL_EXT_shader_16bit_storage"); break;
    case ElementType::kS64:
    case ElementType::kU64: prelude.NeedExtension("GL_EXT_shader_explicit_arithmetic_types_int64"); break;
    default: break;
  }
}

std::string LoadValue(ElementType type, const std::string& element, GlslPrelude& prelude) {
  switch (type) {
    case ElementType::kPred: return "(uint(" + element + ") != 0u)";
    case ElementType::kS8:
    case ElementType::kS16: return "int(" + element + ")";
    case ElementType::kU8:
    case ElementType::kU16: return "uint(" + element + ")";
    case ElementType::kF16: prelude.Helper("k_h2f", kF16ToF32); return "k_h2f(uint(" + element + "))";
    case ElementType::kBF16: return "uintBitsToFloat(uint(" + element + ") << 16)";
    default: return element;
  }
}

std::string StoreValue(ElementType type, const std::string& value, GlslPrelude& prelude) {
  switch (type) {
    case ElementType::kPred: return "uint8_t(" + value + " ? 1u : 0u)";
    case ElementType::kS8:
    case ElementType::kU8:
    case ElementType::kS16:
    case ElementType::kU16: return GlslStorageType(type) + "(" + value + ")";
    case ElementType::kF16: prelude.Helper("k_f2h", kF32ToF16); return "uint16_t(k_f2h(" + value + "))";
    case ElementType::kBF16: prelude.Helper("k_f2bf", kF32ToBf16); return "uint16_t(k_f2bf(" + value + "))";
    default: return value;
  }
}

std::string Normalize(ElementType type, const std::string& value, GlslPrelude& prelude) {
  switch (type) {
    case ElementType::kS8: return "bitfieldExtract(" + value + ", 0, 8)";
    case ElementType::kS16: return "bitfieldExtract(" + value + ", 0, 16)";
    case ElementType::kU8: return "((" + value + ") & 0xffu)";
    case ElementType::kU16: return "((" + value + ") & 0xffffu)";
    case ElementType::kF16:
      prelude.Helper("k_f2h", kF32ToF16);
      prelude.Helper("k_h2f", kF16ToF32);
      return "k_h2f(k_f2h(" + value + "))";
    case ElementType::kBF16:
      prelude.Helper("k_f2bf", kF32ToBf16);
      return "uintBitsToFloat(k_f2bf(" + value + ") << 16)";
    default: return value;
  }
}

std::string IntLiteral(ElementType type, int64_t value) {
  switch (type) {
    case ElementType::kS64:
      if (value == INT64_MIN) return "(-9223372036854775807l - 1l)";
      return value < 0 ? "(" + std::to_string(value) + "l)" : std::to_string(value) + "l";
    case ElementType::kU64: return std::to_string(static_cast<uint64_t>(value)) + "ul";
    case ElementType::kU8:
    case ElementType::kU16:
    case ElementType::kU32: return std::to_string(static_cast<uint32_t>(value)) + "u";
    case ElementType::kPred: return value != 0 ? "true" : "false";
    case ElementType::kF16:
    case ElementType::kBF16:
    case ElementType::kF32:
    case ElementType::kF64:
    case ElementType::kC64:
    case ElementType::kC128: return FloatLiteral(type, static_cast<double>(value));
    default: {
      const auto narrow = static_cast<int32_t>(value);
      if (narrow == INT32_MIN) return "(-2147483647 - 1)";
      return narrow < 0 ? "(" + std::to_string(narrow) + ")" : std::to_string(narrow);
    }
  }
}

std::string UintLiteral(ElementType type, uint64_t value) {
  return IntLiteral(type, static_cast<int64_t>(value));
}

std::string FloatLiteral(ElementType type, double value) {
  const bool is_double = type == ElementType::kF64 || type == ElementType::kC128;
  std::string scalar;
  if (std::isnan(value) || std::isinf(value)) {
    // GLSL has no spelling for these: build them from their bits.
    if (is_double) {
      uint64_t bits;
      std::memcpy(&bits, &value, sizeof(bits));
      scalar = "packDouble2x32(uvec2(" + std::to_string(static_cast<uint32_t>(bits)) + "u, " +
               std::to_string(static_cast<uint32_t>(bits >> 32)) + "u))";
    } else {
      const auto single = static_cast<float>(value);
      uint32_t bits;
      std::memcpy(&bits, &single, sizeof(bits));
      scalar = "uintBitsToFloat(" + std::to_string(bits) + "u)";
    }
  } else {
    char buffer[64];
    // Enough digits to read back the exact value.
    std::snprintf(buffer, sizeof(buffer), is_double ? "%.17e" : "%.9e",
                  is_double ? value : static_cast<double>(static_cast<float>(value)));
    scalar = std::string(buffer) + (is_double ? "lf" : "");
    if (std::signbit(value)) scalar = "(" + scalar + ")";
  }
  if (type == ElementType::kC64) return "vec2(" + scalar + ", 0.0)";
  if (type == ElementType::kC128) return "dvec2(" + scalar + ", 0.0lf)";
  return scalar;
}

std::string LiteralElement(const Literal& literal, int64_t index) {
  const ElementType type = literal.shape().element_type();
  const auto i = static_cast<size_t>(index);
  return DispatchElementType(type, [&](auto tag) -> std::string {
    using T = decltype(tag);
    const T value = literal.data<T>()[i];
    if constexpr (std::is_same_v<T, bool>) {
      return value ? "true" : "false";
    } else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
      const ElementType part = type == ElementType::kC64 ? ElementType::kF32 : ElementType::kF64;
      return GlslValueType(type) + "(" + FloatLiteral(part, static_cast<double>(value.real())) + ", " +
             FloatLiteral(part, static_cast<double>(value.imag())) + ")";
    } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
      return FloatLiteral(ElementType::kF32, static_cast<double>(static_cast<float>(value)));
    } else if constexpr (std::is_floating_point_v<T>) {
      return FloatLiteral(type, static_cast<double>(value));
    } else if constexpr (std::is_unsigned_v<T>) {
      return UintLiteral(type, static_cast<uint64_t>(value));
    } else {
      return IntLiteral(type, static_cast<int64_t>(value));
    }
  });
}

std::string ZeroValue(ElementType type) { return IntLiteral(type, 0); }
std::string OneValue(ElementType type) { return IntLiteral(type, 1); }

}  // namespace kiln::vulkan
