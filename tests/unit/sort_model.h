// The sort tests' model of the interpreter's sort for single-key
// comparators, the reference for their long slices (the CPU backend's
// tests/cpu/runtime_sort_test.cc, the Vulkan backend's
// tests/vulkan/bitonic_sort_test.cc).
//
// The interpreter runs the comparator computation once per comparison, and
// for the comparators jnp.sort and jnp.argsort export (a canonicalisation of
// NaNs and zeros before a TOTALORDER compare) that is eleven instructions a
// call: in CI's sanitizer run its sort of 2^17 keys took minutes. This model
// gives its result on the same operands with the comparison written in C++:
// each slice along `dimension` is ordered by the same bottom-up stable merge
// sort (pairs of sorted runs of 1, 2, 4, ... positions, the right run's
// element first only when it compares strictly less), so it also agrees
// where the comparison is no strict weak order (NaNs under the plain float
// order), and every operand is permuted with the key. The tests check the
// model against the interpreter itself on every configuration they use, on
// slices short enough for the interpreter's comparator calls.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "core/element_type.h"
#include "core/literal.h"

namespace kiln::testing {

// The comparator `compare(a, b), direction=LT|GT[, type=TOTALORDER]` of one
// operand's two elements, or that compare of canonicalised elements (what
// jnp.sort exports: NaN -> NaN, -0 -> +0, then TOTALORDER).
struct SortModelComparator {
  enum class Order {
    kPlain,       // integers, or floats under the partial order (NaN unordered, -0 == +0)
    kTotalOrder,  // -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN
    kCanonical,   // TOTALORDER after every NaN -> the positive quiet NaN and -0 -> +0
  };
  int key_operand = 0;
  Order order = Order::kPlain;
  bool descending = false;  // direction=GT
  bool swapped = false;     // compare(b's key, a's key)
};

// One key element as a value the C++ comparison orders: `number` for floats
// under the partial order (every f16, bf16 and f32 value is a double, NaN
// stays unordered), `ordered` otherwise (an unsigned integer in the
// comparator's order).
struct SortModelKey {
  double number = 0;
  uint64_t ordered = 0;
};

inline SortModelKey SortModelKeyOf(ElementType type, SortModelComparator::Order order,
                                   const uint8_t* element) {
  const int bytes = ByteWidth(type);
  uint64_t bits = 0;
  std::memcpy(&bits, element, static_cast<size_t>(bytes));  // little-endian: the low bytes
  const uint64_t top = uint64_t{1} << (8 * bytes - 1);
  SortModelKey key;
  if (IsIntegral(type)) {
    // Signed values sign-extended, then offset so that unsigned order is theirs.
    if (IsSignedIntegral(type)) {
      const uint64_t extended = (bits & top) != 0 ? bits | ~(top | (top - 1)) : bits;
      key.ordered = extended ^ (uint64_t{1} << 63);
    } else {
      key.ordered = bits;
    }
    return key;
  }
  double value = 0;
  switch (type) {
    case ElementType::kF16: {
      half h;
      std::memcpy(&h, element, 2);
      value = static_cast<double>(static_cast<float>(h));
      break;
    }
    case ElementType::kBF16: {
      bfloat16 b;
      std::memcpy(&b, element, 2);
      value = static_cast<double>(static_cast<float>(b));
      break;
    }
    case ElementType::kF32: {
      float f;
      std::memcpy(&f, element, 4);
      value = static_cast<double>(f);
      break;
    }
    default: std::memcpy(&value, element, 8); break;
  }
  if (order == SortModelComparator::Order::kPlain) {
    key.number = value;
    return key;
  }
  const uint64_t magnitude = bits & (top - 1);
  if (order == SortModelComparator::Order::kCanonical) {
    // Every NaN is the positive quiet NaN, above +inf; -0 is +0.
    if (std::isnan(value)) {
      key.ordered = ~uint64_t{0};
      return key;
    }
    if (magnitude == 0) bits = 0;
  }
  // Sign and magnitude to one unsigned order: negatives below positives,
  // a larger magnitude lower among negatives (-0 just below +0).
  key.ordered = (bits & top) != 0 ? (uint64_t{1} << 63) - 1 - magnitude : (uint64_t{1} << 63) + magnitude;
  return key;
}

// The interpreter's result of sorting `operands` (arrays of one shape)
// along `dimension` by `comparator`: the sorted operands, in order.
inline std::vector<Literal> SortLikeTheInterpreter(const std::vector<Literal>& operands, int64_t dimension,
                                                   const SortModelComparator& comparator) {
  std::vector<Literal> results = operands;
  if (operands.empty()) return results;
  const Literal& keys = operands[static_cast<size_t>(comparator.key_operand)];
  const ElementType key_type = keys.shape().element_type();
  const int key_bytes = ByteWidth(key_type);
  const auto count = static_cast<size_t>(keys.element_count());
  std::vector<SortModelKey> key_of(count);
  for (size_t i = 0; i < count; ++i) {
    key_of[i] =
        SortModelKeyOf(key_type, comparator.order, keys.raw().data() + i * static_cast<size_t>(key_bytes));
  }
  const bool numbers = comparator.order == SortModelComparator::Order::kPlain && IsFloating(key_type);
  // The comparator on elements a and b: compare(a's key, b's key), or
  // compare(b's key, a's key) when swapped.
  const auto compares_true = [&](int64_t a, int64_t b) {
    if (comparator.swapped) std::swap(a, b);
    const SortModelKey& x = key_of[static_cast<size_t>(a)];
    const SortModelKey& y = key_of[static_cast<size_t>(b)];
    if (numbers) return comparator.descending ? x.number > y.number : x.number < y.number;
    return comparator.descending ? x.ordered > y.ordered : x.ordered < y.ordered;
  };

  const std::vector<int64_t>& dimensions = keys.shape().dimensions();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dimension; ++d) outer *= dimensions[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(dimension) + 1; d < dimensions.size(); ++d) inner *= dimensions[d];
  const int64_t length = dimensions.empty() ? 1 : dimensions[static_cast<size_t>(dimension)];
  const auto n = static_cast<size_t>(length);
  std::vector<int64_t> order(n), merged(n);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * length * inner + i;
      for (size_t p = 0; p < n; ++p) order[p] = base + static_cast<int64_t>(p) * inner;
      for (size_t width = 1; width < n; width *= 2) {
        for (size_t left = 0; left < n; left += 2 * width) {
          const size_t middle = std::min(left + width, n), right = std::min(left + 2 * width, n);
          size_t a = left, b = middle, out = left;
          while (a < middle && b < right)
            merged[out++] = compares_true(order[b], order[a]) ? order[b++] : order[a++];
          while (a < middle) merged[out++] = order[a++];
          while (b < right) merged[out++] = order[b++];
        }
        order.swap(merged);
      }
      for (size_t k = 0; k < operands.size(); ++k) {
        const auto bytes = static_cast<size_t>(ByteWidth(operands[k].shape().element_type()));
        const uint8_t* from = operands[k].raw().data();
        uint8_t* to = results[k].raw().data();
        for (size_t p = 0; p < n; ++p) {
          std::memcpy(to + static_cast<size_t>(base + static_cast<int64_t>(p) * inner) * bytes,
                      from + static_cast<size_t>(order[p]) * bytes, bytes);
        }
      }
    }
  }
  return results;
}

}  // namespace kiln::testing
