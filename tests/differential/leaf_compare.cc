#include "tests/differential/leaf_compare.h"

#include <cmath>
#include <sstream>

#include "tests/unit/complex_parts.h"

namespace kiln::differential {

double Tolerance(ElementType type) {
  switch (type) {
    case ElementType::kF16: return 1e-2;
    case ElementType::kBF16: return 4e-2;
    case ElementType::kF32: return 1e-4;
    case ElementType::kF64: return 1e-7;
    default: return 0.0;
  }
}

std::optional<std::string> LeafMismatch(const Literal& expected, const Literal& actual,
                                        const LeafCheck& check) {
  if (!expected.shape().Compatible(actual.shape())) {
    return "shape " + actual.shape().ToString() + ", expected " + expected.shape().ToString();
  }
  const ElementType type = expected.shape().element_type();
  if (IsComplex(type)) {
    // Part by part, as arrays of the part type.
    for (const bool real : {true, false}) {
      const Literal e = testing::ComplexParts(expected, real);
      const Literal a = testing::ComplexParts(actual, real);
      if (std::optional<std::string> mismatch = LeafMismatch(e, a, check)) {
        return std::string(real ? "real part of " : "imaginary part of ") + *mismatch;
      }
    }
    return std::nullopt;
  }
  const bool floating = IsFloating(type);
  const double tolerance = check.exact ? 0.0 : Tolerance(type);
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    bool same = true;
    if (floating) {
      const double e = expected.GetAsDouble(i);
      const double a = actual.GetAsDouble(i);
      if (std::isnan(e) || std::isnan(a)) {
        same = std::isnan(e) && std::isnan(a);
      } else {
        same = e == a || std::fabs(e - a) <= tolerance * (std::fabs(e) + check.magnitude);
      }
    } else {
      // Whole-width comparison: GetAsInt64 is exact for every integer type.
      same = expected.GetAsInt64(i) == actual.GetAsInt64(i);
    }
    if (!same) {
      std::ostringstream message;
      message.precision(17);
      message << "element " << i << " (row-major): got " << actual.GetAsDouble(i) << ", expected "
              << expected.GetAsDouble(i) << (check.exact ? " (exact)" : " (tolerance ")
              << (check.exact ? ""
                              : std::to_string(tolerance) + " x (|expected| + " +
                                    std::to_string(check.magnitude) + "))");
      return message.str();
    }
  }
  return std::nullopt;
}

}  // namespace kiln::differential
