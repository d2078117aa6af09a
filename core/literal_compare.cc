#include "core/literal_compare.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <type_traits>

namespace kiln {
namespace {

bool Close(double actual, double expected, const Tolerance& tolerance) {
  if (std::isnan(expected)) return std::isnan(actual);
  if (std::isinf(expected)) return actual == expected;
  return std::fabs(actual - expected) <= tolerance.atol + tolerance.rtol * std::fabs(expected);
}

// Real and imaginary parts of an element as doubles.
template <typename T>
void Parts(T value, double* real, double* imag) {
  if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
    *real = value.real();
    *imag = value.imag();
  } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    *real = static_cast<float>(value);
    *imag = 0;
  } else {
    *real = static_cast<double>(value);
    *imag = 0;
  }
}

void CompareExact(const Literal& actual, const Literal& expected, LeafDifference& difference) {
  if (actual == expected) return;
  const int64_t count = expected.element_count();
  for (int64_t i = 0; i < count; ++i) {
    if (actual.GetAsInt64(i) == expected.GetAsInt64(i)) continue;
    if (difference.mismatches++ == 0) {
      std::ostringstream out;
      out << "element " << i << " is " << actual.GetAsInt64(i) << " but expected " << expected.GetAsInt64(i);
      difference.first_mismatch = out.str();
    }
  }
  if (difference.mismatches == 0) {  // equal values, different bits (e.g. PRED bytes other than 0/1)
    difference.mismatches = 1;
    difference.first_mismatch = "the bits differ";
  }
}

void CompareInexact(const Literal& actual, const Literal& expected, const Tolerance& tolerance,
                    LeafDifference& difference) {
  const ElementType type = expected.shape().element_type();
  const bool complex = IsComplex(type);
  DispatchElementType(type, [&](auto tag) {
    using T = decltype(tag);
    const auto got = actual.data<T>();
    const auto want = expected.data<T>();
    const int64_t count = expected.element_count();
    for (int64_t i = 0; i < count; ++i) {
      double gr, gi, wr, wi;
      Parts(got[static_cast<size_t>(i)], &gr, &gi);
      Parts(want[static_cast<size_t>(i)], &wr, &wi);
      if (std::isfinite(gr) && std::isfinite(wr) && std::isfinite(gi) && std::isfinite(wi)) {
        difference.max_abs_difference =
            std::max({difference.max_abs_difference, std::fabs(gr - wr), std::fabs(gi - wi)});
      }
      if (Close(gr, wr, tolerance) && Close(gi, wi, tolerance)) continue;
      if (difference.mismatches++ == 0) {
        std::ostringstream out;
        out.precision(9);
        out << "element " << i << " is " << gr;
        if (complex) out << (gi < 0 ? "" : "+") << gi << "i";
        out << " but expected " << wr;
        if (complex) out << (wi < 0 ? "" : "+") << wi << "i";
        difference.first_mismatch = out.str();
      }
    }
  });
}

}  // namespace

Tolerance ToleranceFor(ElementType type) {
  switch (type) {
    case ElementType::kF16: return {1e-2, 1e-2};
    case ElementType::kBF16: return {2e-2, 2e-2};
    case ElementType::kF32:
    case ElementType::kC64: return {1e-4, 1e-5};
    case ElementType::kF64:
    case ElementType::kC128: return {1e-9, 1e-12};
    default: return {0.0, 0.0};
  }
}

Tolerance ModuleTolerance(const Module& module) {
  Tolerance loosest;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      for (const Shape& leaf : instruction->shape.Leaves()) {
        const Tolerance t = ToleranceFor(leaf.element_type());
        loosest.rtol = std::max(loosest.rtol, t.rtol);
        loosest.atol = std::max(loosest.atol, t.atol);
      }
    }
  }
  return loosest;
}

Tolerance LeafTolerance(ElementType type, const Tolerance& module_tolerance) {
  if (!IsFloating(type) && !IsComplex(type)) return {};
  const Tolerance own = ToleranceFor(type);
  return {std::max(own.rtol, module_tolerance.rtol), std::max(own.atol, module_tolerance.atol)};
}

LeafDifference CompareLeaf(const Literal& actual, const Literal& expected, const Tolerance& tolerance) {
  LeafDifference difference;
  if (!actual.shape().Compatible(expected.shape())) {
    difference.mismatches = std::max<int64_t>(expected.element_count(), 1);
    difference.first_mismatch =
        "shape " + actual.shape().ToString() + " but expected " + expected.shape().ToString();
    return difference;
  }
  const ElementType type = expected.shape().element_type();
  if (IsFloating(type) || IsComplex(type)) {
    CompareInexact(actual, expected, tolerance, difference);
  } else {
    CompareExact(actual, expected, difference);
  }
  return difference;
}

}  // namespace kiln
