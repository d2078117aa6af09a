// The key of one launch of an `rng` kernel on a device backend: a function
// of the execution's seed and the launch's number in that execution, so
// equal seeds give equal numbers and every launch (a loop's iterations
// included) draws a different stream. Kernels hash (key, element index).
#pragma once

#include <cstdint>

namespace kiln {

inline uint64_t RngSplitMix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

inline uint64_t RngLaunchKey(uint64_t seed, uint64_t launch) {
  return RngSplitMix64(RngSplitMix64(seed) + launch * 0x9E3779B97F4A7C15ull);
}

}  // namespace kiln
