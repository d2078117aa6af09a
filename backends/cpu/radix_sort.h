// A least-significant-digit radix sort of 4-byte words by their key bits for long
// slices of the key sort path (sort_thunk.cc). On AMD Zen 4 the vectorised
// quicksort (vector_sort.h) is slow on long slices of 4-byte keys: its
// AVX-512 partition's compress-stores of 32-bit lanes to memory are slow
// there, and 16M keys took about 1 s on one core. A radix sort reads and
// writes each key once per digit (three 11-bit digits for long slices, four
// 8-bit ones for short: radix_sort.cc), whatever the keys: 16M keys in about
// 170 ms on one core.
//
// The slice is cut into one contiguous part per thread of the pool; each
// pass counts every part's digits, gives each (digit value, part) its first
// position in digit-major, part-minor order, and each part scatters its keys
// there, so a pass is stable and the parts run in parallel. A digit that is
// the same for every key is not sorted by (one counting pass finds every
// digit's counts before the first scatter).
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln::cpu {

class IntraOpThreadPool;

// Slices of 4-byte words at least this long take the radix sort; shorter ones
// Highway's vectorised quicksort. Measured on one core of an AMD Zen 4 (AVX-512
// quicksort): 8192 random keys 0.069 ms radix, 0.131 ms quicksort; 4096: 0.037
// against 0.053; 1024: 0.014 against 0.009.
constexpr size_t kRadixSortMinKeys = 8 * 1024;

// Sorts words[0, n) ascending by their top `key_bits` bits (8, 16 or 32),
// stably, in place, through scratch[0, n) (whatever it holds; overwritten),
// in as many passes as the key needs: words that hold a key above its
// position, in position order, come out in (key, position) order. `pool`
// may be null (one thread).
void RadixSortByKeyBits(uint32_t* words, uint32_t* scratch, size_t n, int key_bits,
                        const IntraOpThreadPool* pool);

}  // namespace kiln::cpu
