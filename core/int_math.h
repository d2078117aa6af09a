// Integer arithmetic that the kernel emitters share (workgroup counts,
// passes of a sorting network).
#pragma once

#include <cstdint>

namespace kiln {

// ceil(a / b), for a >= 0 and b > 0.
constexpr int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The smallest p with 2^p >= n (0 for n <= 1): log2 of a power of two, and
// the number of halvings (merge passes) that take n down to 1.
constexpr int64_t CeilLog2(int64_t n) {
  int64_t p = 0;
  while ((int64_t{1} << p) < n) ++p;
  return p;
}

}  // namespace kiln
