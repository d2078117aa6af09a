// Test helper: the real or imaginary parts of a complex literal as a literal
// of the part type (f32 for c64, f64 for c128), so complex results can be
// compared part by part like real ones.
#pragma once

#include "core/literal.h"

namespace kiln::testing {

inline Literal ComplexParts(const Literal& complex, bool real) {
  const ElementType type = complex.shape().element_type();
  Literal parts(Shape(ComplexComponentType(type), complex.shape().dimensions()));
  DispatchElementType(type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (convert_detail::IsComplexT<T>::value) {
      using R = typename T::value_type;
      auto out = parts.data<R>();
      auto in = complex.data<T>();
      for (size_t i = 0; i < out.size(); ++i) out[i] = real ? in[i].real() : in[i].imag();
    }
    return 0;
  });
  return parts;
}

}  // namespace kiln::testing
