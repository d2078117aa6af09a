#include "tools/random_inputs.h"

#include <type_traits>

namespace kiln::tool {
namespace {

// SplitMix64: small, fast and fully specified, so a seed means the same
// values everywhere (the <random> distributions are not specified exactly).
class RandomBits {
 public:
  explicit RandomBits(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1), a multiple of 2^-52.
  double Signed() { return static_cast<double>(Next() >> 11) * 0x1p-52 - 1.0; }
  // Uniform in [0, n).
  uint64_t Below(uint64_t n) { return Next() % n; }

 private:
  uint64_t state_;
};

template <typename T>
T RandomValue(RandomBits& bits) {
  if constexpr (std::is_same_v<T, bool>) {
    return bits.Below(2) == 1;
  } else if constexpr (std::is_same_v<T, complex64>) {
    const auto real = static_cast<float>(bits.Signed());
    return complex64(real, static_cast<float>(bits.Signed()));
  } else if constexpr (std::is_same_v<T, complex128>) {
    const double real = bits.Signed();
    return complex128(real, bits.Signed());
  } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    return T(static_cast<float>(bits.Signed()));
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(bits.Signed());
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(static_cast<int64_t>(bits.Below(16)) - 8);
  } else {
    return static_cast<T>(bits.Below(16));
  }
}

}  // namespace

std::vector<Literal> RandomInputs(const std::vector<Shape>& parameter_leaves, uint64_t seed) {
  RandomBits bits(seed);
  std::vector<Literal> inputs;
  inputs.reserve(parameter_leaves.size());
  for (const Shape& leaf : parameter_leaves) {
    Literal literal(leaf);
    if (leaf.IsArray()) {
      DispatchElementType(leaf.element_type(), [&](auto tag) {
        using T = decltype(tag);
        for (T& value : literal.data<T>()) value = RandomValue<T>(bits);
      });
    }
    inputs.push_back(std::move(literal));
  }
  return inputs;
}

}  // namespace kiln::tool
