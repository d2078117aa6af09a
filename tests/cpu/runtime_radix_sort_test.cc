// RadixSortByKeyBits (backends/cpu/radix_sort.h) against std::sort: lengths
// around the key sort path's threshold and long ones (past the length whose
// scatter streams its lines to memory), keys with many ties, keys that
// differ in one byte only (every other digit's pass skipped), on 1, 2 and
// 4 threads, with scratch memory that holds garbage.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/radix_sort.h"
#include "backends/cpu/thread_pool.h"

namespace kiln::cpu {
namespace {

// Sorts `keys` by all 32 bits with RadixSortByKeyBits on `threads` threads (no pool for one)
// and expects std::sort's result. The keys lie one element past an aligned
// start when `offset`, so the scatter meets lines it cannot stream.
void ExpectRadixSortsAsStdSort(const std::vector<uint32_t>& keys, int threads, size_t offset = 0) {
  std::vector<uint32_t> want = keys;
  std::sort(want.begin(), want.end());
  std::vector<uint32_t> memory(keys.size() + offset);
  std::copy(keys.begin(), keys.end(), memory.begin() + static_cast<std::ptrdiff_t>(offset));
  std::vector<uint32_t> scratch(keys.size() + 1, 0xdeadbeefu);
  IntraOpThreadPool pool(threads);
  RadixSortByKeyBits(memory.data() + offset, scratch.data(), keys.size(), 32, threads > 1 ? &pool : nullptr);
  const std::vector<uint32_t> got(memory.begin() + static_cast<std::ptrdiff_t>(offset), memory.end());
  ASSERT_EQ(got.size(), want.size());
  size_t mismatches = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i] && mismatches++ == 0) first = i;
  }
  EXPECT_EQ(mismatches, 0u) << keys.size() << " keys on " << threads << " threads: first at " << first
                            << ", got " << got[first] << ", want " << want[first];
}

std::vector<uint32_t> RadixTestKeys(size_t n, unsigned seed, const std::function<uint32_t(uint32_t)>& shape) {
  std::mt19937 random(seed);
  std::vector<uint32_t> keys(n);
  for (uint32_t& key : keys) key = shape(static_cast<uint32_t>(random()));
  return keys;
}

const int kRadixTestThreads[] = {1, 2, 4};

TEST(RadixSortTest, RandomKeysOfLengthsAroundTheThresholdAndLong) {
  const size_t lengths[] = {0,
                            1,
                            2,
                            15,
                            16,
                            17,
                            1000,
                            kRadixSortMinKeys - 1,
                            kRadixSortMinKeys,
                            kRadixSortMinKeys + 1,
                            65536 + 3,
                            size_t{1} << 20};
  for (const int threads : kRadixTestThreads) {
    for (const size_t n : lengths) {
      ExpectRadixSortsAsStdSort(RadixTestKeys(n, static_cast<unsigned>(n), [](uint32_t r) { return r; }),
                                threads);
    }
  }
}

TEST(RadixSortTest, LongSlicesStreamTheirLinesAlignedOrNot) {
  // 2^21 + 5 keys are 8 MiB and more: whole lines go out past the caches.
  const size_t n = (size_t{1} << 21) + 5;
  for (const int threads : {1, 2}) {
    for (const size_t offset : {0, 1}) {
      ExpectRadixSortsAsStdSort(RadixTestKeys(n, 3, [](uint32_t r) { return r; }), threads, offset);
    }
  }
}

TEST(RadixSortTest, ManyTiesAndAllEqualKeys) {
  for (const int threads : kRadixTestThreads) {
    for (const size_t n : {size_t{40000}, size_t{300001}}) {
      ExpectRadixSortsAsStdSort(RadixTestKeys(n, 5, [](uint32_t r) { return r % 5 * 0x01010101u; }), threads);
      ExpectRadixSortsAsStdSort(RadixTestKeys(n, 6, [](uint32_t r) { return r % 3 == 0 ? 0u : ~0u; }),
                                threads);
      ExpectRadixSortsAsStdSort(std::vector<uint32_t>(n, 0x12345678u), threads);
    }
  }
}

TEST(RadixSortTest, KeysDifferingInSomeBytesOnlySkipTheOtherPasses) {
  // With 8-bit digits, one byte varying skips three passes and the one left
  // ends in the scratch memory (copied back); two bytes: two passes, ending
  // in place; three: one skipped, three passes. 11-bit digits (bits 0-10,
  // 11-21, 22-31) skip the passes of the digits no varying byte touches.
  const uint32_t base = 0xa5c3e17fu;
  for (const int threads : kRadixTestThreads) {
    for (uint32_t varying = 1; varying < 16; ++varying) {
      uint32_t mask = 0;
      for (int byte = 0; byte < 4; ++byte) {
        if (varying & (1u << byte)) mask |= 0xffu << (8 * byte);
      }
      // 8-bit digits, each a byte, and 11-bit digits across the bytes.
      for (const size_t n : {size_t{30001}, size_t{70001}}) {
        ExpectRadixSortsAsStdSort(
            RadixTestKeys(n, varying, [&](uint32_t r) { return (base & ~mask) | (r & mask); }), threads);
      }
    }
  }
}

TEST(RadixSortTest, AllKeysInOnePartsBucketButNotTheOthers) {
  // Each part (thread) holds keys of one top byte, different per part: the
  // top digit's offsets must still put the parts' buckets in digit order.
  for (const int threads : kRadixTestThreads) {
    const size_t n = 200000;
    std::vector<uint32_t> keys = RadixTestKeys(n, 9, [](uint32_t r) { return r & 0x00ffffffu; });
    for (size_t i = 0; i < n; ++i) keys[i] |= static_cast<uint32_t>(0xf0 - i * 4 / n * 0x30) << 24;
    ExpectRadixSortsAsStdSort(keys, threads);
  }
}

TEST(RadixSortTest, WordsOfAKeyAbovePositionsSortByTheKeyBitsOnly) {
  // 8- and 16-bit keys above their positions (a 1- or 2-byte key's
  // argsort): one or two passes, and the positions below stay in order
  // within a key. The positions are in order when the sort starts, as the
  // sort path packs them.
  for (const int key_bits : {8, 16}) {
    for (const int threads : kRadixTestThreads) {
      for (const size_t n : {kRadixSortMinKeys + 1, size_t{65536}}) {
        std::vector<uint32_t> words = RadixTestKeys(n, static_cast<unsigned>(key_bits),
                                                    [&](uint32_t r) { return r >> (32 - key_bits); });
        for (size_t p = 0; p < n; ++p) words[p] = (words[p] << (32 - key_bits)) | static_cast<uint32_t>(p);
        // Positions are distinct: the stable order by key is the words' order.
        std::vector<uint32_t> want = words;
        std::sort(want.begin(), want.end());
        std::vector<uint32_t> scratch(n);
        IntraOpThreadPool pool(threads);
        RadixSortByKeyBits(words.data(), scratch.data(), n, key_bits, threads > 1 ? &pool : nullptr);
        EXPECT_TRUE(words == want) << key_bits << "-bit keys, " << n << " words, " << threads << " threads";
      }
    }
  }
}

}  // namespace
}  // namespace kiln::cpu
