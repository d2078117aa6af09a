#include "backends/vulkan/glsl_typed_helper.h"

#include <cmath>
#include <utility>

namespace kiln::vulkan {
namespace {

// Substitutes $T (value type), $U (unsigned type of the computation width),
// $W (bit width of the element type), $Z/$ONE/$NEG1 (literals of $T),
// $MIN (smallest value of a signed type), $NAN/$INF (float literals: of
// double for f64, of float for the rest), $N (name suffix), $R (a complex
// type's component value type).
std::string FillTypePlaceholders(std::string text, ElementType type) {
  const bool wide = type == ElementType::kS64 || type == ElementType::kU64;
  const bool is_float = IsFloating(type) || IsComplex(type);
  const std::string t = GlslValueType(type);
  const std::string u = wide ? "uint64_t" : "uint";
  std::string min = "0";
  if (IsSignedIntegral(type)) min = wide ? "(-9223372036854775807l - 1l)" : "(-2147483647 - 1)";
  const std::pair<const char*, std::string> substitutions[] = {
      {"$T", t},
      {"$U", u},
      {"$W", std::to_string(BitWidth(type))},
      {"$Z", is_float ? FloatLiteral(type, 0.0) : ZeroValue(type)},
      {"$ONE", is_float ? FloatLiteral(type, 1.0) : OneValue(type)},
      {"$NEG1",
       IsSignedIntegral(type) ? IntLiteral(type, -1) : (wide ? "0xfffffffffffffffful" : "0xffffffffu")},
      {"$MIN", min},
      {"$NAN",
       is_float ? FloatLiteral(type == ElementType::kF64 ? type : ElementType::kF32, std::nan("")) : "0"},
      {"$INF", is_float ? FloatLiteral(type == ElementType::kF64 ? type : ElementType::kF32, INFINITY) : "0"},
      {"$N", std::string(ElementTypeName(type))},
      {"$R", GlslValueType(ComplexComponentType(type))},
  };
  for (const auto& [key, value] : substitutions) {
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
      text.replace(at, std::string(key).size(), value);
  }
  return text;
}

}  // namespace

std::string TypedHelperCall(GlslPrelude& prelude, const std::string& name, ElementType type,
                            const std::string& body, const std::string& args) {
  const std::string full = FillTypePlaceholders(name, type);
  prelude.Helper(full, FillTypePlaceholders(body, type));
  return full + "(" + args + ")";
}

}  // namespace kiln::vulkan
