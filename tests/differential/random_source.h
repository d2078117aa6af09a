// A small deterministic random source (SplitMix64). The standard library's
// distributions differ between implementations, so every draw here is
// computed from the raw 64-bit stream: a seed means the same graph on every
// compiler and standard library.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace kiln::differential {

class RandomSource {
 public:
  explicit RandomSource(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound); bound must be positive. The modulo bias is
  // irrelevant for test generation.
  int64_t Below(int64_t bound) { return static_cast<int64_t>(Next() % static_cast<uint64_t>(bound)); }
  // Uniform in [low, high].
  int64_t Between(int64_t low, int64_t high) { return low + Below(high - low + 1); }
  bool Chance(int64_t numerator, int64_t denominator) { return Below(denominator) < numerator; }
  bool Coin() { return (Next() & 1) != 0; }
  // Uniform in [low, high) as a double with 53 random bits.
  double Real(double low, double high) {
    return low + (high - low) * (static_cast<double>(Next() >> 11) * 0x1.0p-53);
  }
  template <typename T>
  const T& Pick(std::span<const T> items) {
    return items[static_cast<size_t>(Below(static_cast<int64_t>(items.size())))];
  }
  template <typename T>
  const T& Pick(const std::vector<T>& items) {
    return Pick(std::span<const T>(items));
  }
  // A random permutation of 0..n-1 (Fisher-Yates).
  std::vector<int64_t> Permutation(int64_t n) {
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
    for (int64_t i = n - 1; i > 0; --i)
      std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(Below(i + 1))]);
    return order;
  }

 private:
  uint64_t state_;
};

}  // namespace kiln::differential
