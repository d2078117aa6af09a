// Sorting arrays of unsigned keys with Highway's vectorised quicksort (VQSort,
// Debian libhwy-dev: run-time dispatch to AVX-512, AVX2 or SSE4 as the CPU
// offers). The key sort path (sort_thunk.h) encodes each element as an
// unsigned integer in the comparator's order, alone or with its position
// packed below it, and sorts those; the result is unique whatever the
// algorithm (equal keys are equal bit patterns, or carry distinct positions),
// so a quicksort serves stable sorts too.
//
// Slices are sorted in parallel, one per thread; one long slice is first
// split by VectorPartition around sampled pivots (sort_thunk.cc), and the
// parts sorted on the threads. Slices of 4-byte words from
// kRadixSortMinKeys on take the radix sort instead (radix_sort.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln::cpu {

// A 128-bit key ordered by (hi, lo): an 8-byte key above its position.
struct alignas(16) WideKey {
  uint64_t lo;
  uint64_t hi;
};

// Sorts keys[0, n) ascending, in place.
void VectorSortAscending(uint16_t* keys, size_t n);
void VectorSortAscending(uint32_t* keys, size_t n);
void VectorSortAscending(uint64_t* keys, size_t n);
void VectorSortAscending(WideKey* keys, size_t n);

// Moves the keys of keys[0, n) that are <= pivot to its front, the others
// behind them, and returns how many are <= pivot.
size_t VectorPartition(uint32_t* keys, size_t n, uint32_t pivot);
size_t VectorPartition(uint64_t* keys, size_t n, uint64_t pivot);

}  // namespace kiln::cpu
