// Index arithmetic over dense row-major arrays shared by the kernels.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/literal.h"

namespace kiln::interpreter {

// Elements between consecutive entries of each dimension in row-major order.
std::vector<int64_t> RowMajorStrides(std::span<const int64_t> dims);

// For every multi-index i of `out_dims` in row-major order, copies the
// element at `source + base + sum(i[d] * source_strides[d])` (in elements) to
// the next slot of `destination`. Strides may be zero (broadcast) or negative
// (reverse). The innermost loop is a typed copy, not index arithmetic.
void StridedCopy(const uint8_t* source, int64_t base, std::span<const int64_t> source_strides,
                 std::span<const int64_t> out_dims, uint8_t* destination, int element_bytes);

// Advances `index` to the next multi-index of `dims` in row-major order;
// returns false after the last one.
bool NextIndex(std::span<const int64_t> dims, std::span<int64_t> index);

// A literal of `shape` with its dimensions permuted: result dim i is input
// dim permutation[i].
Literal TransposeLiteral(const Literal& input, std::span<const int64_t> permutation);

// Converts an index literal's element to int64 (any integer type).
int64_t IndexValue(const Literal& literal, int64_t linear);

}  // namespace kiln::interpreter
