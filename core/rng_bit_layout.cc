#include "core/rng_bit_layout.h"

namespace kiln {

RngAlgorithm ResolveRngAlgorithm(RngAlgorithm algorithm) {
  return algorithm == RngAlgorithm::kDefault ? RngAlgorithm::kPhilox : algorithm;
}

StatusOr<RngBitLayout> PlanRngBits(RngAlgorithm algorithm, int64_t state_words, const Shape& bits_shape) {
  RngBitLayout layout;
  layout.algorithm = ResolveRngAlgorithm(algorithm);
  layout.state_words = state_words;
  const bool philox = layout.algorithm == RngAlgorithm::kPhilox;
  if (philox ? state_words != 2 && state_words != 3 : state_words != 2) {
    return InvalidArgument("rng-bit-generator: ", philox ? "PHILOX" : "THREE_FRY", " needs a state of u64[",
                           philox ? "2] or u64[3" : "2", "], got u64[", state_words, "]");
  }
  const ElementType type = bits_shape.element_type();
  const int width = IsIntegral(type) ? BitWidth(type) : 0;
  if (width < 8 || width > 64) {
    return InvalidArgument("rng-bit-generator: random bits must be an integer type of 8 to 64 bits, got ",
                           bits_shape.ToString());
  }
  layout.element_word_bits = width == 64 ? 64 : 32;
  const auto count = static_cast<uint64_t>(bits_shape.element_count());
  if (philox) {
    layout.blocks = layout.element_word_bits == 64 ? (count + 1) / 2 : (count + 3) / 4;
    return layout;
  }
  if (layout.element_word_bits == 64) {
    layout.blocks = count;
    return layout;
  }
  if (bits_shape.rank() == 0) {
    layout.blocks = 1;
    return layout;
  }
  // XLA splits the first even dimension, else the (first) largest one.
  for (int64_t dim = 0; dim < bits_shape.rank() && layout.split_dim < 0; ++dim) {
    if (bits_shape.dimensions(dim) % 2 == 0) layout.split_dim = dim;
  }
  if (layout.split_dim < 0) {
    layout.split_dim = 0;
    for (int64_t dim = 1; dim < bits_shape.rank(); ++dim) {
      if (bits_shape.dimensions(dim) > bits_shape.dimensions(layout.split_dim)) layout.split_dim = dim;
    }
  }
  layout.split_extent = bits_shape.dimensions(layout.split_dim);
  for (int64_t dim = layout.split_dim + 1; dim < bits_shape.rank(); ++dim) {
    layout.split_stride *= bits_shape.dimensions(dim);
  }
  const uint64_t halves = static_cast<uint64_t>(layout.split_extent + 1) / 2;
  layout.blocks = layout.split_extent == 0 ? 0 : count / static_cast<uint64_t>(layout.split_extent) * halves;
  return layout;
}

RngBitSource RngBitSourceOf(const RngBitLayout& layout, int64_t element) {
  const auto index = static_cast<uint64_t>(element);
  if (layout.algorithm == RngAlgorithm::kPhilox) {
    if (layout.element_word_bits == 64) return {index / 2, static_cast<int>(index % 2) * 2};
    return {index / 4, static_cast<int>(index % 4)};
  }
  if (layout.element_word_bits == 64) return {index, 0};
  if (layout.split_dim < 0) return {0, 0};
  const auto stride = static_cast<uint64_t>(layout.split_stride);
  const auto extent = static_cast<uint64_t>(layout.split_extent);
  const uint64_t inner = index % stride;
  const uint64_t along = index / stride % extent;
  const uint64_t outer = index / stride / extent;
  const uint64_t halves = (extent + 1) / 2;
  return {(outer * halves + along / 2) * stride + inner, static_cast<int>(along % 2)};
}

}  // namespace kiln
