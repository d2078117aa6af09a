// Square blocks of 64-byte lines transposed in AVX-512 registers: sixteen
// lines of sixteen 4-byte elements, or eight lines of eight 8-byte ones.
// Only unpacks and lane shuffles, so every bit pattern (NaN payloads too)
// moves unchanged. The transposing copies (data_movement_thunks.cc) and the
// scans (scan_vectors.cc) share these. Like avx512_lanes.h, everything here
// carries KILN_AVX512_LANES and runs only where HasAvx512Lanes() says so.
#pragma once

#include "backends/cpu/avx512_lanes.h"

namespace kiln::cpu {

#if defined(__x86_64__)
namespace avx512_transpose_steps {

// The shuffles in their masked forms with every lane selected: the plain
// intrinsics pass GCC 12 an "undefined" merge source that -Wuninitialized
// (an error here) reports once they are inlined.
inline constexpr __mmask16 kEveryLane16 = 0xffff;
inline constexpr __mmask8 kEveryLane8 = 0xff;
KILN_AVX512_LANES inline __m512i UnpackLow32(__m512i a, __m512i b) {
  return _mm512_mask_unpacklo_epi32(a, kEveryLane16, a, b);
}
KILN_AVX512_LANES inline __m512i UnpackHigh32(__m512i a, __m512i b) {
  return _mm512_mask_unpackhi_epi32(a, kEveryLane16, a, b);
}
KILN_AVX512_LANES inline __m512i UnpackLow64(__m512i a, __m512i b) {
  return _mm512_mask_unpacklo_epi64(a, kEveryLane8, a, b);
}
KILN_AVX512_LANES inline __m512i UnpackHigh64(__m512i a, __m512i b) {
  return _mm512_mask_unpackhi_epi64(a, kEveryLane8, a, b);
}
// 128-bit quarters: the even (kEvenQuarters) or odd (kOddQuarters) quarters of a, then those of b.
inline constexpr int kEvenQuarters = 0x88;
inline constexpr int kOddQuarters = 0xdd;
template <int kQuarters>
KILN_AVX512_LANES inline __m512i SwapQuarters(__m512i a, __m512i b) {
  return _mm512_mask_shuffle_i64x2(a, kEveryLane8, a, b, kQuarters);
}

}  // namespace avx512_transpose_steps

// r[i] holds element j of line i in lane j (i, j < 16, 4-byte elements);
// afterwards r[j] holds element j of line i in lane i. 32-bit pairs, 64-bit
// pairs, then 128-bit quarters twice.
KILN_AVX512_LANES __attribute__((always_inline)) inline void TransposeLines16x16(__m512i* r) {
  using namespace avx512_transpose_steps;
  __m512i t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = UnpackLow32(r[i], r[i + 1]);
    t[i + 1] = UnpackHigh32(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = UnpackLow64(t[i], t[i + 2]);
    r[i + 1] = UnpackHigh64(t[i], t[i + 2]);
    r[i + 2] = UnpackLow64(t[i + 1], t[i + 3]);
    r[i + 3] = UnpackHigh64(t[i + 1], t[i + 3]);
  }
  for (int i = 0; i < 16; i += 8) {
    for (int j = 0; j < 4; ++j) {
      t[i + j] = SwapQuarters<kEvenQuarters>(r[i + j], r[i + j + 4]);
      t[i + j + 4] = SwapQuarters<kOddQuarters>(r[i + j], r[i + j + 4]);
    }
  }
  for (int j = 0; j < 8; ++j) {
    r[j] = SwapQuarters<kEvenQuarters>(t[j], t[j + 8]);
    r[j + 8] = SwapQuarters<kOddQuarters>(t[j], t[j + 8]);
  }
}

// The same for eight lines of eight 8-byte elements: 64-bit pairs, then
// 128-bit quarters twice.
KILN_AVX512_LANES __attribute__((always_inline)) inline void TransposeLines8x8(__m512i* r) {
  using namespace avx512_transpose_steps;
  __m512i t[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = UnpackLow64(r[i], r[i + 1]);
    t[i + 1] = UnpackHigh64(r[i], r[i + 1]);
  }
  // t[2p + q] holds, in 128-bit quarter l, lines 2p and 2p+1 at element 2l+q.
  for (int q = 0; q < 2; ++q) {
    const __m512i even_low = SwapQuarters<kEvenQuarters>(t[q], t[2 + q]);
    const __m512i odd_low = SwapQuarters<kOddQuarters>(t[q], t[2 + q]);
    const __m512i even_high = SwapQuarters<kEvenQuarters>(t[4 + q], t[6 + q]);
    const __m512i odd_high = SwapQuarters<kOddQuarters>(t[4 + q], t[6 + q]);
    r[q] = SwapQuarters<kEvenQuarters>(even_low, even_high);
    r[4 + q] = SwapQuarters<kOddQuarters>(even_low, even_high);
    r[2 + q] = SwapQuarters<kEvenQuarters>(odd_low, odd_high);
    r[6 + q] = SwapQuarters<kOddQuarters>(odd_low, odd_high);
  }
}

// kLines lines of kLines elements of `bytes` = 64 / kLines each.
template <int kLines>
KILN_AVX512_LANES __attribute__((always_inline)) inline void TransposeLines(__m512i* r) {
  static_assert(kLines == 16 || kLines == 8);
  if constexpr (kLines == 16) {
    TransposeLines16x16(r);
  } else {
    TransposeLines8x8(r);
  }
}

#endif  // __x86_64__

}  // namespace kiln::cpu
