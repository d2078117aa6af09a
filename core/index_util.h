// Conversions between multi-dimensional indices and linear positions in
// memory under any layout (minor_to_major order, optional padded dimensions).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/shape.h"

namespace kiln {

class IndexUtil {
 public:
  // Linear element position of `index` in memory for `shape`'s layout.
  static int64_t MultiIndexToLinear(const Shape& shape, std::span<const int64_t> index);
  // Inverse of MultiIndexToLinear (for positions that hold real elements).
  static std::vector<int64_t> LinearToMultiIndex(const Shape& shape, int64_t linear);
  // Elements between consecutive entries of dimension `dimension` in memory.
  static int64_t Stride(const Shape& shape, int64_t dimension);
  // Advances `index` to the next one in row-major order; false after the last.
  static bool Bump(const Shape& shape, std::span<int64_t> index);
  static bool InBounds(const Shape& shape, std::span<const int64_t> index);
};

// Copies a dense row-major array into `shape`'s layout (filling padding with
// the layout's padding value) and back.
std::vector<uint8_t> RowMajorToLayout(const Shape& shape, std::span<const uint8_t> row_major);
std::vector<uint8_t> LayoutToRowMajor(const Shape& shape, std::span<const uint8_t> physical);

}  // namespace kiln
