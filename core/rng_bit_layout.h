// Where each element of an rng-bit-generator's output comes from, as XLA
// computes it (its RngBitGeneratorExpander and prng library), so that Kiln's
// random bits equal XLA's bit for bit on every backend. JAX's `rbg` and
// `unsafe_rbg` PRNG implementations are built on these bits.
//
// The state is u64[n]: state[0] is the key (two 32-bit words, low first).
//   THREE_FRY (n == 2): Threefry-2x32, 20 rounds; block b encrypts the 64-bit
//     counter state[1] + b.
//   PHILOX (n == 2 or 3): Philox-4x32, 10 rounds; block b encrypts the
//     128-bit counter C + b, where C = (low state[1], high state[2]) when n is
//     3 and (low state[1], high state[0]) when n is 2 — XLA reverses the
//     two-word state, so the key doubles as the counter's high word.
//   DEFAULT is PHILOX, as on XLA's CPU and GPU backends.
// Elements are taken in row-major order:
//   64-bit elements: Threefry element i is block i (word 0 low, word 1 high);
//     Philox element i is words 2*(i%2), 2*(i%2)+1 of block i/2.
//   32-bit elements: Philox element i is word i%4 of block i/4. Threefry
//     splits one dimension in halves (the first even one, else the largest):
//     the element whose index along it is a takes word a%2 of the block
//     numbered by its row-major position in the shape with that dimension
//     ceil(d/2) long and index a/2. A scalar is word 0 of block 0.
//   8- and 16-bit elements are the low bits of the 32-bit layout's word.
// The new state is the old one with the counter advanced by the number of
// blocks the shape used (Philox with n == 2 keeps its high word: a carry out
// of state[1] is dropped, as in XLA).
#pragma once

#include <cstdint>

#include "core/attributes.h"
#include "core/shape.h"
#include "core/status.h"

namespace kiln {

struct RngBitLayout {
  RngAlgorithm algorithm = RngAlgorithm::kPhilox;  // never kDefault
  int64_t state_words = 2;
  // 32 for elements of 8 to 32 bits (one word each, truncated), 64 for
  // 64-bit elements (two words each).
  int element_word_bits = 32;
  // Threefry with 32-bit words: the dimension split in halves, its length,
  // and the row-major stride of one step along it.
  int64_t split_dim = -1;
  int64_t split_extent = 1;
  int64_t split_stride = 1;
  // Counter blocks the whole output uses (the counter's advance).
  uint64_t blocks = 0;
};

// The algorithm `algorithm` stands for (kDefault -> kPhilox).
RngAlgorithm ResolveRngAlgorithm(RngAlgorithm algorithm);

// The layout for a state of `state_words` u64 words and a bits array of
// `bits_shape`. INVALID_ARGUMENT when the state size does not suit the
// algorithm or the element type is not an integer of 8 to 64 bits.
StatusOr<RngBitLayout> PlanRngBits(RngAlgorithm algorithm, int64_t state_words, const Shape& bits_shape);

// The counter block and the first 32-bit word within it (of 2 for Threefry,
// 4 for Philox) that row-major element `element` takes.
struct RngBitSource {
  uint64_t block = 0;
  int word = 0;
};
RngBitSource RngBitSourceOf(const RngBitLayout& layout, int64_t element);

}  // namespace kiln
