#include "backends/cpu/radix_sort.h"

#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "backends/cpu/thread_pool.h"

namespace kiln::cpu {
namespace {

// Keys a part holds at least, so a short slice is not cut into parts whose
// counting costs more than their scatter saves.
constexpr size_t kRadixMinKeysPerPart = 16 * 1024;
// Slices of at least this many bytes stream their scattered lines to memory.
constexpr size_t kRadixStreamBytes = 8 << 20;
// Slices of at least this many keys sort by 11-bit digits (three passes,
// 2048 buckets whose lines fill 128 KiB: the L2 cache), shorter ones by
// 8-bit digits (four passes, 256 buckets: 16 KiB, the L1 cache). Random
// keys, one thread, ms (8 bits / 11 bits): 16Ki 0.15 / 0.23, 64Ki 0.67 /
// 0.57, 1Mi 12.6-13.3 / 9.7-10.3, 16Mi 208-210 / 169-175.
constexpr size_t kRadixWideDigitMinKeys = 64 * 1024;

// Words of one 64-byte cache line.
template <typename K>
struct alignas(64) RadixLine {
  static constexpr size_t kKeys = 64 / sizeof(K);
  K keys[kKeys];
};

// The digits of a sort of K words by kBits-bit digits of their top
// kKeyBits bits.
template <typename K, int kKeyBits, int kBits>
struct RadixDigits {
  static constexpr size_t kBuckets = size_t{1} << kBits;
  static constexpr int kCount = (kKeyBits + kBits - 1) / kBits;
  static constexpr int kLowBit = static_cast<int>(sizeof(K)) * 8 - kKeyBits;
  using Counts = std::array<size_t, kBuckets>;
  using EveryCount = std::array<Counts, kCount>;
  static uint32_t Of(K key, int shift) { return static_cast<uint32_t>(key >> shift) & (kBuckets - 1); }
  static int Shift(int digit) { return kLowBit + digit * kBits; }
};

// The parts a slice of n keys is cut into: one per thread, each at least
// kRadixMinKeysPerPart long.
size_t RadixPartCount(size_t n, const IntraOpThreadPool* pool) {
  const size_t threads = pool == nullptr ? 1 : static_cast<size_t>(pool->num_threads());
  const size_t most = n / kRadixMinKeysPerPart;
  return most < 1 ? 1 : threads < most ? threads : most;
}

// Runs body(part) for every part in [0, parts), spread over `pool`'s threads.
template <typename Body>
void ForEachRadixPart(size_t parts, const IntraOpThreadPool* pool, const Body& body) {
  if (parts == 1 || pool == nullptr) {
    for (size_t part = 0; part < parts; ++part) body(part);
    return;
  }
  pool->ParallelFor(static_cast<int64_t>(parts), 1, [&](int64_t first, int64_t last) {
    for (auto part = static_cast<size_t>(first); part < static_cast<size_t>(last); ++part) body(part);
  });
}

template <typename Digits, typename K>
void CountEveryRadixDigit(const K* keys, size_t begin, size_t end, typename Digits::EveryCount& counts) {
  for (typename Digits::Counts& digit : counts) digit.fill(0);
  for (size_t i = begin; i < end; ++i) {
    const K key = keys[i];
    // Unrolled: every digit's shift a constant.
    [&]<size_t... kDigit>(std::index_sequence<kDigit...>) {
      (++counts[kDigit][Digits::Of(key, Digits::Shift(static_cast<int>(kDigit)))], ...);
    }(std::make_index_sequence<Digits::kCount>{});
  }
}

template <typename Digits, typename K>
void CountRadixDigit(const K* keys, size_t begin, size_t end, int shift, typename Digits::Counts& counts) {
  counts.fill(0);
  for (size_t i = begin; i < end; ++i) ++counts[Digits::Of(keys[i], shift)];
}

// Writes keys[from, to) of a bucket's line to target's line at `line` (a
// multiple of the line's keys). A whole line is streamed past the caches
// where `stream` says so and the line is 16-byte aligned: it is not read
// before the next pass, and a store that misses the caches would first
// read the line it overwrites.
template <typename K>
inline void WriteRadixLine(const RadixLine<K>& keys, size_t from, size_t to, K* target, size_t line,
                           bool stream) {
  if (from == 0 && to == RadixLine<K>::kKeys) {
#if defined(__SSE2__)
    K* at = target + line;
    if (stream && reinterpret_cast<uintptr_t>(at) % 16 == 0) {
      for (size_t byte = 0; byte < sizeof(keys.keys); byte += 16) {
        _mm_stream_si128(reinterpret_cast<__m128i*>(reinterpret_cast<char*>(at) + byte),
                         _mm_load_si128(reinterpret_cast<const __m128i*>(
                             reinterpret_cast<const char*>(keys.keys) + byte)));
      }
      return;
    }
#endif
    std::memcpy(target + line, keys.keys, sizeof(keys.keys));  // a fixed size: inlined
  } else {
    std::memcpy(target + line + from, keys.keys + from, (to - from) * sizeof(K));
  }
}

// Writes source[begin, end) to target, each key at the next position of its
// digit's bucket (`next`). Keys gather in a cache line per bucket first,
// aligned as their place in target, and go out a whole line at a time.
template <typename Digits, typename K>
void ScatterByRadixDigit(const K* __restrict source, K* __restrict target, size_t begin, size_t end,
                         int shift, const typename Digits::Counts& next, bool stream) {
  constexpr size_t kLineKeys = RadixLine<K>::kKeys;
  const std::unique_ptr<RadixLine<K>[]> lines =
      std::make_unique_for_overwrite<RadixLine<K>[]>(Digits::kBuckets);
  std::array<size_t, Digits::kBuckets> line_start;  // the target position of each line's first key
  std::array<uint32_t, Digits::kBuckets> first;     // a bucket's first line starts inside a target line
  std::array<uint32_t, Digits::kBuckets> filled;
  for (size_t bucket = 0; bucket < Digits::kBuckets; ++bucket) {
    line_start[bucket] = next[bucket] / kLineKeys * kLineKeys;
    first[bucket] = static_cast<uint32_t>(next[bucket] % kLineKeys);
    filled[bucket] = first[bucket];
  }
  for (size_t i = begin; i < end; ++i) {
    const K key = source[i];
    const uint32_t bucket = Digits::Of(key, shift);
    lines[bucket].keys[filled[bucket]++] = key;
    if (filled[bucket] == kLineKeys) {
      WriteRadixLine(lines[bucket], first[bucket], kLineKeys, target, line_start[bucket], stream);
      line_start[bucket] += kLineKeys;
      first[bucket] = 0;
      filled[bucket] = 0;
    }
  }
  for (size_t bucket = 0; bucket < Digits::kBuckets; ++bucket) {
    WriteRadixLine(lines[bucket], first[bucket], filled[bucket], target, line_start[bucket], false);
  }
#if defined(__SSE2__)
  // Streamed lines reach memory in no particular order: all of them before
  // the next pass reads them on another thread.
  if (stream) _mm_sfence();
#endif
}

template <typename Digits, typename K>
void RadixSortByDigits(K* keys, K* scratch, size_t n, const IntraOpThreadPool* pool) {
  const size_t parts = RadixPartCount(n, pool);
  const auto part_begin = [&](size_t part) {
    return n / parts * part + (part < n % parts ? part : n % parts);
  };
  std::vector<typename Digits::EveryCount> counts(parts);
  ForEachRadixPart(parts, pool, [&](size_t part) {
    CountEveryRadixDigit<Digits>(keys, part_begin(part), part_begin(part + 1), counts[part]);
  });
  std::vector<typename Digits::Counts> next(parts);
  const bool stream = n * sizeof(K) >= kRadixStreamBytes;
  K* source = keys;
  K* target = scratch;
  bool scattered = false;
  for (int digit = 0; digit < Digits::kCount; ++digit) {
    const int shift = Digits::Shift(digit);
    // A digit every key shares leaves the order as it is. The totals hold
    // whatever order earlier passes left the keys in.
    bool shared = false;
    for (size_t bucket = 0; bucket < Digits::kBuckets && !shared; ++bucket) {
      size_t total = 0;
      for (size_t part = 0; part < parts; ++part) total += counts[part][digit][bucket];
      shared = total == n;
    }
    if (shared) continue;
    // The counts per part were taken before the first scatter: after one,
    // each part holds other keys.
    if (scattered) {
      ForEachRadixPart(parts, pool, [&](size_t part) {
        CountRadixDigit<Digits>(source, part_begin(part), part_begin(part + 1), shift, counts[part][digit]);
      });
    }
    size_t position = 0;
    for (size_t bucket = 0; bucket < Digits::kBuckets; ++bucket) {
      for (size_t part = 0; part < parts; ++part) {
        next[part][bucket] = position;
        position += counts[part][digit][bucket];
      }
    }
    ForEachRadixPart(parts, pool, [&](size_t part) {
      ScatterByRadixDigit<Digits>(source, target, part_begin(part), part_begin(part + 1), shift, next[part],
                                  stream);
    });
    std::swap(source, target);
    scattered = true;
  }
  if (source != keys) {
    ForEachRadixPart(parts, pool, [&](size_t part) {
      const size_t begin = part_begin(part);
      std::memcpy(keys + begin, source + begin, (part_begin(part + 1) - begin) * sizeof(K));
    });
  }
}

// Sorts words by their top kKeyBits bits: 11-bit digits for a long slice
// where they take fewer passes than 8-bit ones, 8-bit ones otherwise.
template <typename K, int kKeyBits>
void RadixSortByTopBits(K* words, K* scratch, size_t n, const IntraOpThreadPool* pool) {
  if (n < 2) return;
  if (n >= kRadixWideDigitMinKeys &&
      RadixDigits<K, kKeyBits, 11>::kCount < RadixDigits<K, kKeyBits, 8>::kCount) {
    RadixSortByDigits<RadixDigits<K, kKeyBits, 11>>(words, scratch, n, pool);
  } else {
    RadixSortByDigits<RadixDigits<K, kKeyBits, 8>>(words, scratch, n, pool);
  }
}

}  // namespace

void RadixSortByKeyBits(uint32_t* words, uint32_t* scratch, size_t n, int key_bits,
                        const IntraOpThreadPool* pool) {
  switch (key_bits) {
    case 8: return RadixSortByTopBits<uint32_t, 8>(words, scratch, n, pool);
    case 16: return RadixSortByTopBits<uint32_t, 16>(words, scratch, n, pool);
    case 32: return RadixSortByTopBits<uint32_t, 32>(words, scratch, n, pool);
    default: std::abort();  // the callers' key widths are the three above
  }
}

}  // namespace kiln::cpu
