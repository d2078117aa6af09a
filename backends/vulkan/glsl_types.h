// How Kiln's element types live in GLSL: the type values are computed in,
// the type buffers hold them in, the conversions between the two, the device
// features each needs, and literals.
//
// Values: pred is bool; s8/s16/s32 are int and u8/u16/u32 uint (narrow ones
// kept sign- or zero-extended, wrapped after each op); f16 and bf16 are float
// holding a value of their type (rounded after each op, as the interpreter
// does); c64 is vec2 and c128 dvec2. Storage: 8- and 16-bit elements need the
// 8/16-bit storage features only (no 8/16-bit arithmetic); f16 and bf16 are
// stored as their bits in uint16_t.
#pragma once

#include <string>

#include "backends/vulkan/shader_features.h"
#include "core/ir.h"

namespace kiln::vulkan {

// Extensions and helper functions a kernel's source needs, collected while
// emitting it and written before the kernel body.
class GlslPrelude {
 public:
  void NeedExtension(const std::string& extension);
  // Adds a helper function once, by name; returns the name.
  const std::string& Helper(const std::string& name, const std::string& definition);
  std::string Extensions() const;
  std::string Helpers() const;
  // Adds `other`'s extensions and helpers, each once by name (a shader made
  // of several kernels' code, glsl_whole_loop.h).
  void Absorb(const GlslPrelude& other);

 private:
  std::vector<std::string> extensions_;
  std::vector<std::string> helper_names_;
  std::vector<std::string> helpers_;
};

std::string GlslValueType(ElementType type);
std::string GlslStorageType(ElementType type);

// OK, or why the device cannot hold or compute `type` (names the feature).
Status CheckElementType(ElementType type, const ShaderFeatures& features);
// Records the extensions `type` needs.
void NeedTypeExtensions(ElementType type, GlslPrelude& prelude);

// `element` is a buffer element expression (b0.d[i]); the result is a value.
std::string LoadValue(ElementType type, const std::string& element, GlslPrelude& prelude);
// A value converted to what the buffer stores.
std::string StoreValue(ElementType type, const std::string& value, GlslPrelude& prelude);

// Wraps a narrow integer or rounds an f16/bf16 value to its type; other
// types pass unchanged.
std::string Normalize(ElementType type, const std::string& value, GlslPrelude& prelude);

// Literals in the value type.
std::string IntLiteral(ElementType type, int64_t value);
std::string UintLiteral(ElementType type, uint64_t value);
std::string FloatLiteral(ElementType type, double value);
// Element `index` of a literal, as a value-type expression.
std::string LiteralElement(const Literal& literal, int64_t index);
// Zero and one in the value type.
std::string ZeroValue(ElementType type);
std::string OneValue(ElementType type);

}  // namespace kiln::vulkan
