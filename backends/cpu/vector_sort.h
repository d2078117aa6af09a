// Sorting arrays of unsigned keys with Highway's vectorised quicksort (VQSort,
// Debian libhwy-dev: run-time dispatch to AVX-512, AVX2 or SSE4 as the CPU
// offers). The key sort path (sort_thunk.h) encodes each element as an
// unsigned integer in the comparator's order, alone or with its position
// packed below it, and sorts those; the result is unique whatever the
// algorithm (equal keys are equal bit patterns, or carry distinct positions),
// so a quicksort serves stable sorts too.
//
// One slice is sorted by one thread (slices run in parallel). Splitting a
// slice over the threads did not pay on the 2-core machine here: VQSort
// sorts 1M 4-byte keys in about 5 ms, and both ways of splitting cost as
// much again on one core (merging sorted halves, a chain of dependent loads,
// about 4 ns a key; scattering into buckets by the top bits, about 6 ms).
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
void VectorSortAscending(uint32_t* keys, size_t n);
void VectorSortAscending(uint64_t* keys, size_t n);
void VectorSortAscending(WideKey* keys, size_t n);

}  // namespace kiln::cpu
