// What the LAPACK tests share (lapack_custom_call_test, lapack_factor_
// expansion_test, qr_svd_expansion_test): batches of matrices held as
// complex doubles whatever the element type, converted to and from
// literals, random normal entries, and the names of JAX's LAPACK targets.
#pragma once

#include <complex>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/element_type.h"
#include "core/literal.h"
#include "core/shape.h"

namespace kiln::testing::lapack {

using Complex = std::complex<double>;
// A batch of row-major matrices, whatever the element type.
using Values = std::vector<Complex>;

inline constexpr ElementType kLapackTypes[] = {ElementType::kF32, ElementType::kF64, ElementType::kC64,
                                               ElementType::kC128};

// LAPACK's type letter: s, d, c or z.
inline char LapackLetter(ElementType type) {
  switch (type) {
    case ElementType::kF32: return 's';
    case ElementType::kF64: return 'd';
    case ElementType::kC64: return 'c';
    default: return 'z';
  }
}

// JAX's custom-call target of `routine` (e.g. "potrf") for `type`.
inline std::string LapackTarget(ElementType type, const std::string& routine) {
  return std::string("lapack_") + LapackLetter(type) + routine + "_ffi";
}

inline ElementType RealTypeOf(ElementType type) {
  return IsComplex(type) ? ComplexComponentType(type) : type;
}

// The machine epsilon of the type's real component.
inline double EpsilonOf(ElementType type) {
  return RealTypeOf(type) == ElementType::kF32 ? std::numeric_limits<float>::epsilon()
                                               : std::numeric_limits<double>::epsilon();
}

// The number of matrices in a batch of dimensions `batch`.
inline int64_t MatrixCount(std::span<const int64_t> batch) {
  int64_t count = 1;
  for (int64_t d : batch) count *= d;
  return count;
}

// `values` as a literal of `type` and `dims` (real types keep the real parts).
inline Literal ToLiteral(const Values& values, ElementType type, std::vector<int64_t> dims) {
  Literal literal(Shape(type, std::move(dims)));
  for (size_t i = 0; i < values.size(); ++i) {
    switch (type) {
      case ElementType::kF32: literal.data<float>()[i] = static_cast<float>(values[i].real()); break;
      case ElementType::kF64: literal.data<double>()[i] = values[i].real(); break;
      case ElementType::kC64: literal.data<complex64>()[i] = complex64(values[i]); break;
      default: literal.data<complex128>()[i] = values[i]; break;
    }
  }
  return literal;
}

inline Values FromLiteral(const Literal& literal) {
  Values values(static_cast<size_t>(literal.element_count()));
  for (size_t i = 0; i < values.size(); ++i) {
    switch (literal.shape().element_type()) {
      case ElementType::kC64: values[i] = Complex(literal.data<complex64>()[i]); break;
      case ElementType::kC128: values[i] = literal.data<complex128>()[i]; break;
      default: values[i] = literal.GetAsDouble(static_cast<int64_t>(i)); break;
    }
  }
  return values;
}

// `count` standard normal values (real and imaginary parts for complex
// types), the same for the same seed.
inline Values RandomValues(ElementType type, int64_t count, uint32_t seed) {
  std::mt19937 engine(seed);
  std::normal_distribution<double> normal;
  Values values(static_cast<size_t>(count));
  for (Complex& v : values)
    v = IsComplex(type) ? Complex(normal(engine), normal(engine)) : Complex(normal(engine));
  return values;
}

}  // namespace kiln::testing::lapack
