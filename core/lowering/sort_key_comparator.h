// Sort comparators that order by one operand's key (what jnp.sort,
// jnp.argsort and lax.sort export): compare(a, b) LT or GT of one operand's
// two elements, plainly (integers, floats under the partial order), with
// XLA's TOTALORDER comparison, or with the total order after the
// canonicalisation jnp.sort and jnp.argsort put first (NaN -> one NaN,
// -0 -> +0), any other operands passengers. A backend that recognises such
// a comparator sorts by keys instead of calling it: the CPU's key sort
// (backends/cpu/sort_thunk.h), the vulkan library sort
// (backends/vulkan/library_sort.h).
#pragma once

#include <cstdint>
#include <optional>

#include "core/ir.h"

namespace kiln {

// What a single-key comparator orders by.
struct SortKeyPlan {
  enum class Order {
    kInteger,             // signed or unsigned integers
    kFloat,               // floats, partial order: -0 == +0, NaN unordered
    kTotalOrder,          // XLA's TOTALORDER: -NaN < -inf < ... < -0 < +0 < ... < +NaN
    kCanonicalTotalOrder  // TOTALORDER after NaN -> nan_bits and +-0 -> zero_bits
  };
  int operand = 0;  // the operand holding the keys
  ElementType type = ElementType::kF32;
  Order order = Order::kInteger;
  bool descending = false;
  uint64_t nan_bits = 0;   // kCanonicalTotalOrder only
  uint64_t zero_bits = 0;  // kCanonicalTotalOrder only
};

// The plan when `sort`'s comparator is such a single-key comparison of a
// supported key type (f16, bf16, f32, f64, s8-s64, u8-u64) and every slice
// has fewer than 2^32 elements; nullopt otherwise.
std::optional<SortKeyPlan> MatchSortKeyComparator(const Instruction& sort);

// The sign bit and the exponent mask of a float type's bit pattern (f16,
// bf16, f32, f64; nullopt for other types): a NaN's bits without the sign
// are above the exponent mask, a zero's are 0.
struct FloatBitLayout {
  uint64_t sign = 0;
  uint64_t exponent = 0;
};
std::optional<FloatBitLayout> FloatBitLayoutOf(ElementType type);

}  // namespace kiln
