#include "backends/cpu/scan_vectors.h"

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kiln::cpu {

#if defined(__x86_64__)
#define KILN_SCAN_AVX512 __attribute__((target("avx512f")))

namespace {

// The running vectors of a block of columns (kScanColumnsPerBlock).
constexpr int64_t kScanVectorsPerBlock = kScanColumnsPerBlock<float> / kScanLanes<float>;

// The shuffles in their masked forms with every lane selected: the plain
// intrinsics pass GCC 12 an "undefined" merge source that -Wuninitialized
// (an error here) reports once they are inlined.
constexpr __mmask16 kScanEveryLane16 = 0xffff;
constexpr __mmask8 kScanEveryLane8 = 0xff;
KILN_SCAN_AVX512 inline __m512i ScanUnpackLow32(__m512i a, __m512i b) {
  return _mm512_mask_unpacklo_epi32(a, kScanEveryLane16, a, b);
}
KILN_SCAN_AVX512 inline __m512i ScanUnpackHigh32(__m512i a, __m512i b) {
  return _mm512_mask_unpackhi_epi32(a, kScanEveryLane16, a, b);
}
KILN_SCAN_AVX512 inline __m512i ScanUnpackLow64(__m512i a, __m512i b) {
  return _mm512_mask_unpacklo_epi64(a, kScanEveryLane8, a, b);
}
KILN_SCAN_AVX512 inline __m512i ScanUnpackHigh64(__m512i a, __m512i b) {
  return _mm512_mask_unpackhi_epi64(a, kScanEveryLane8, a, b);
}
// 128-bit quarters: the even (0x88) or odd (0xdd) quarters of a, then those of b.
constexpr int kScanEvenQuarters = 0x88;
constexpr int kScanOddQuarters = 0xdd;
template <int kQuarters>
KILN_SCAN_AVX512 inline __m512i ScanSwapQuarters(__m512i a, __m512i b) {
  return _mm512_mask_shuffle_i64x2(a, kScanEveryLane8, a, b, kQuarters);
}

// r[i] holds element j of line i in lane j; afterwards r[j] holds element j
// of line i in lane i. 32-bit pairs, 64-bit pairs, then 128-bit quarters twice.
KILN_SCAN_AVX512 inline void ScanTranspose16(__m512i* r) {
  __m512i t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = ScanUnpackLow32(r[i], r[i + 1]);
    t[i + 1] = ScanUnpackHigh32(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = ScanUnpackLow64(t[i], t[i + 2]);
    r[i + 1] = ScanUnpackHigh64(t[i], t[i + 2]);
    r[i + 2] = ScanUnpackLow64(t[i + 1], t[i + 3]);
    r[i + 3] = ScanUnpackHigh64(t[i + 1], t[i + 3]);
  }
  for (int i = 0; i < 16; i += 8) {
    for (int j = 0; j < 4; ++j) {
      t[i + j] = ScanSwapQuarters<kScanEvenQuarters>(r[i + j], r[i + j + 4]);
      t[i + j + 4] = ScanSwapQuarters<kScanOddQuarters>(r[i + j], r[i + j + 4]);
    }
  }
  for (int j = 0; j < 8; ++j) {
    r[j] = ScanSwapQuarters<kScanEvenQuarters>(t[j], t[j + 8]);
    r[j + 8] = ScanSwapQuarters<kScanOddQuarters>(t[j], t[j + 8]);
  }
}

// The same for eight lines of eight 8-byte elements: 64-bit pairs, then
// 128-bit quarters twice.
KILN_SCAN_AVX512 inline void ScanTranspose8(__m512i* r) {
  __m512i t[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = ScanUnpackLow64(r[i], r[i + 1]);
    t[i + 1] = ScanUnpackHigh64(r[i], r[i + 1]);
  }
  for (int q = 0; q < 2; ++q) {
    const __m512i even_low = ScanSwapQuarters<kScanEvenQuarters>(t[q], t[2 + q]);
    const __m512i odd_low = ScanSwapQuarters<kScanOddQuarters>(t[q], t[2 + q]);
    const __m512i even_high = ScanSwapQuarters<kScanEvenQuarters>(t[4 + q], t[6 + q]);
    const __m512i odd_high = ScanSwapQuarters<kScanOddQuarters>(t[4 + q], t[6 + q]);
    r[q] = ScanSwapQuarters<kScanEvenQuarters>(even_low, even_high);
    r[4 + q] = ScanSwapQuarters<kScanOddQuarters>(even_low, even_high);
    r[2 + q] = ScanSwapQuarters<kScanEvenQuarters>(odd_low, odd_high);
    r[6 + q] = ScanSwapQuarters<kScanOddQuarters>(odd_low, odd_high);
  }
}

// One scan step on every lane: held = op(held, next), the interpreter's
// operation. Maximum and minimum keep a NaN already held (the masked-off
// lanes) and elsewhere are vmaxps/vminps(held, next), which give held only
// where held > next (held < next) and next otherwise: a NaN next, and the
// later of two equal zeros, as the interpreter's MaximumOp/MinimumOp(held,
// next) do. A reverse maximum or minimum is op(next, held): the window's
// first NaN and, among equal values, its last, as the window's order gives.
template <typename T>
struct ScanVector;

template <>
struct ScanVector<float> {
  using Mask = __mmask16;
  static constexpr int kLanes = 16;
  KILN_SCAN_AVX512 static Mask Prefix(int64_t count) { return static_cast<Mask>((1u << count) - 1); }
  KILN_SCAN_AVX512 static __m512i Set(float value) { return _mm512_castps_si512(_mm512_set1_ps(value)); }
  KILN_SCAN_AVX512 static __m512i Load(Mask m, const float* p) { return _mm512_maskz_loadu_epi32(m, p); }
  KILN_SCAN_AVX512 static void Store(float* p, Mask m, __m512i v) { _mm512_mask_storeu_epi32(p, m, v); }
  KILN_SCAN_AVX512 static void Transpose(__m512i* r) { ScanTranspose16(r); }
  template <ScanOp kOp, bool kReverse>
  KILN_SCAN_AVX512 static __m512i Step(__m512i held_bits, __m512i next_bits) {
    const __m512 held = _mm512_castsi512_ps(held_bits), next = _mm512_castsi512_ps(next_bits);
    const __m512 first = kReverse ? next : held, second = kReverse ? held : next;
    const __mmask16 ordered = _mm512_cmp_ps_mask(first, first, _CMP_ORD_Q);
    switch (kOp) {
      case ScanOp::kAdd: return _mm512_castps_si512(_mm512_add_ps(held, next));
      case ScanOp::kMultiply: return _mm512_castps_si512(_mm512_mul_ps(held, next));
      case ScanOp::kMaximum: return _mm512_castps_si512(_mm512_mask_max_ps(first, ordered, first, second));
      case ScanOp::kMinimum: return _mm512_castps_si512(_mm512_mask_min_ps(first, ordered, first, second));
    }
    return held_bits;
  }
};

template <>
struct ScanVector<double> {
  using Mask = __mmask8;
  static constexpr int kLanes = 8;
  KILN_SCAN_AVX512 static Mask Prefix(int64_t count) { return static_cast<Mask>((1u << count) - 1); }
  KILN_SCAN_AVX512 static __m512i Set(double value) { return _mm512_castpd_si512(_mm512_set1_pd(value)); }
  KILN_SCAN_AVX512 static __m512i Load(Mask m, const double* p) { return _mm512_maskz_loadu_epi64(m, p); }
  KILN_SCAN_AVX512 static void Store(double* p, Mask m, __m512i v) { _mm512_mask_storeu_epi64(p, m, v); }
  KILN_SCAN_AVX512 static void Transpose(__m512i* r) { ScanTranspose8(r); }
  template <ScanOp kOp, bool kReverse>
  KILN_SCAN_AVX512 static __m512i Step(__m512i held_bits, __m512i next_bits) {
    const __m512d held = _mm512_castsi512_pd(held_bits), next = _mm512_castsi512_pd(next_bits);
    const __m512d first = kReverse ? next : held, second = kReverse ? held : next;
    const __mmask8 ordered = _mm512_cmp_pd_mask(first, first, _CMP_ORD_Q);
    switch (kOp) {
      case ScanOp::kAdd: return _mm512_castpd_si512(_mm512_add_pd(held, next));
      case ScanOp::kMultiply: return _mm512_castpd_si512(_mm512_mul_pd(held, next));
      case ScanOp::kMaximum: return _mm512_castpd_si512(_mm512_mask_max_pd(first, ordered, first, second));
      case ScanOp::kMinimum: return _mm512_castpd_si512(_mm512_mask_min_pd(first, ordered, first, second));
    }
    return held_bits;
  }
};

// One block of a line group: elements [c, c + n) of `rows` lines from `in`
// and `out` on, `length` apart, transposed so that each vector holds one step
// of every line, scanned, and transposed back. kFullRows: rows is the
// vector's lanes; kFullChunk: n is. Otherwise the loads and stores are
// masked (a lane past `rows` neither reads nor writes: its mask is empty).
template <typename T, ScanOp kOp, bool kReverse, bool kFullRows, bool kFullChunk>
KILN_SCAN_AVX512 __attribute__((always_inline)) inline void ScanLineBlock(__m512i& held, const T* in, T* out,
                                                                          int64_t length, int64_t rows,
                                                                          int64_t c, int64_t n, bool stream) {
  using V = ScanVector<T>;
  constexpr int kLanes = V::kLanes;
  constexpr bool kWhole = kFullRows && kFullChunk;
  const typename V::Mask chunk = V::Prefix(n);
  __m512i r[kLanes];
#pragma GCC unroll 16
  for (int k = 0; k < kLanes; ++k) {
    if constexpr (kWhole) {
      r[k] = _mm512_loadu_si512(in + k * length + c);
    } else {
      const bool live = kFullRows || k < rows;
      r[k] = V::Load(live ? chunk : 0, live ? in + k * length + c : in);
    }
  }
  V::Transpose(r);
#pragma GCC unroll 16
  for (int j = 0; j < kLanes; ++j) {
    const int s = kReverse ? kLanes - 1 - j : j;
    if (kFullChunk || s < n) {
      held = V::template Step<kOp, kReverse>(held, r[s]);
      r[s] = held;
    }
  }
  V::Transpose(r);
#pragma GCC unroll 16
  for (int k = 0; k < kLanes; ++k) {
    if constexpr (kWhole) {
      if (stream) {
        _mm512_stream_si512(reinterpret_cast<__m512i*>(out + k * length + c), r[k]);
      } else {
        _mm512_storeu_si512(out + k * length + c, r[k]);
      }
    } else {
      const bool live = kFullRows || k < rows;
      V::Store(live ? out + k * length + c : out, live ? chunk : 0, r[k]);
    }
  }
}

// `rows` (at most a vector's lanes) lines of `length` elements from `in` and
// `out` on, a block of lanes x lanes elements at a time (the last, or in
// reverse the first, partial). `stream`: non-temporal stores where the
// output lines are 64-byte aligned.
template <typename T, ScanOp kOp, bool kReverse, bool kFullRows>
KILN_SCAN_AVX512 void ScanLineGroup(T initial, const T* in, T* out, int64_t length, int64_t rows,
                                    bool stream) {
  using V = ScanVector<T>;
  constexpr int kLanes = V::kLanes;
  const bool aligned = reinterpret_cast<uintptr_t>(out) % 64 == 0 && length * sizeof(T) % 64 == 0;
  stream = stream && aligned;
  __m512i held = V::Set(initial);
  const int64_t whole = length / kLanes * kLanes, tail = length - whole;
  if (kReverse && tail > 0)
    ScanLineBlock<T, kOp, kReverse, kFullRows, false>(held, in, out, length, rows, whole, tail, stream);
  for (int64_t step = 0; step < whole; step += kLanes) {
    const int64_t c = kReverse ? whole - kLanes - step : step;
    ScanLineBlock<T, kOp, kReverse, kFullRows, true>(held, in, out, length, rows, c, kLanes, stream);
  }
  if (!kReverse && tail > 0)
    ScanLineBlock<T, kOp, kReverse, kFullRows, false>(held, in, out, length, rows, whole, tail, stream);
}

// A block of `width` (at most kScanVectorsPerBlock vectors) adjacent columns
// from `in` and `out` on, rows `inner` elements apart: a running vector per
// vector of columns walks the scanned dimension. kFull: every vector whole.
// `stream`: non-temporal stores where the rows are 64-byte aligned.
template <typename T, ScanOp kOp, bool kReverse, bool kFull>
KILN_SCAN_AVX512 void ScanColumnBlock(T initial, const T* in, T* out, int64_t length, int64_t inner,
                                      int64_t width, bool stream) {
  using V = ScanVector<T>;
  constexpr int kLanes = V::kLanes;
  // Whole vectors are 64-byte aligned in every row, or in none.
  stream = stream && reinterpret_cast<uintptr_t>(out) % 64 == 0 && inner * sizeof(T) % 64 == 0;
  __m512i held[kScanVectorsPerBlock];
  typename V::Mask mask[kScanVectorsPerBlock];
  for (int v = 0; v < kScanVectorsPerBlock; ++v) {
    held[v] = V::Set(initial);
    mask[v] = V::Prefix(std::clamp<int64_t>(width - v * kLanes, 0, kLanes));
  }
  for (int64_t step = 0; step < length; ++step) {
    const int64_t i = kReverse ? length - 1 - step : step;
    const T* row_in = in + i * inner;
    T* row_out = out + i * inner;
#pragma GCC unroll 8
    for (int v = 0; v < kScanVectorsPerBlock; ++v) {
      if constexpr (kFull) {
        held[v] = V::template Step<kOp, kReverse>(held[v], _mm512_loadu_si512(row_in + v * kLanes));
        if (stream) {
          _mm512_stream_si512(reinterpret_cast<__m512i*>(row_out + v * kLanes), held[v]);
        } else {
          _mm512_storeu_si512(row_out + v * kLanes, held[v]);
        }
      } else if (mask[v] != 0) {
        held[v] = V::template Step<kOp, kReverse>(held[v], V::Load(mask[v], row_in + v * kLanes));
        V::Store(row_out + v * kLanes, mask[v], held[v]);
      }
    }
  }
}

// Calls body.template operator()<op, reverse>().
template <typename Body>
void WithScanKind(ScanOp op, bool reverse, Body&& body) {
  auto with_op = [&]<ScanOp kOp>() {
    if (reverse) {
      body.template operator()<kOp, true>();
    } else {
      body.template operator()<kOp, false>();
    }
  };
  switch (op) {
    case ScanOp::kAdd: with_op.template operator()<ScanOp::kAdd>(); break;
    case ScanOp::kMultiply: with_op.template operator()<ScanOp::kMultiply>(); break;
    case ScanOp::kMaximum: with_op.template operator()<ScanOp::kMaximum>(); break;
    case ScanOp::kMinimum: with_op.template operator()<ScanOp::kMinimum>(); break;
  }
}

}  // namespace

bool HasAvx512ForScan() {
  static const bool has_avx512 = __builtin_cpu_supports("avx512f");
  return has_avx512;
}

template <typename T>
int64_t ScanLinesInLanes(const ScanGeometry& geometry, T initial, const T* input, T* output,
                         int64_t first_line, int64_t last_line, bool stream) {
  constexpr int64_t kLanes = kScanLanes<T>;
  const int64_t length = geometry.length;
  int64_t line = first_line;
  while (line < last_line) {
    const int64_t rows = std::min(kLanes, last_line - line);
    if (2 * rows < kLanes) break;
    WithScanKind(geometry.op, geometry.reverse, [&]<ScanOp kOp, bool kReverse>() {
      const T* in = input + line * length;
      T* out = output + line * length;
      if (rows == kLanes) {
        ScanLineGroup<T, kOp, kReverse, true>(initial, in, out, length, rows, stream);
      } else {
        ScanLineGroup<T, kOp, kReverse, false>(initial, in, out, length, rows, stream);
      }
    });
    line += rows;
  }
  return line - first_line;
}

template <typename T>
void ScanColumnsInLanes(const ScanGeometry& geometry, T initial, const T* input, T* output, int64_t outer,
                        int64_t first_column, int64_t last_column, bool stream) {
  constexpr int64_t kBlock = kScanVectorsPerBlock * kScanLanes<T>;
  const int64_t length = geometry.length, inner = geometry.inner;
  const T* in = input + outer * length * inner;
  T* out = output + outer * length * inner;
  for (int64_t column = first_column; column < last_column; column += kBlock) {
    const int64_t width = std::min(kBlock, last_column - column);
    WithScanKind(geometry.op, geometry.reverse, [&]<ScanOp kOp, bool kReverse>() {
      if (width == kBlock) {
        ScanColumnBlock<T, kOp, kReverse, true>(initial, in + column, out + column, length, inner, width,
                                                stream);
      } else {
        ScanColumnBlock<T, kOp, kReverse, false>(initial, in + column, out + column, length, inner, width,
                                                 stream);
      }
    });
  }
}

void FenceScanStores() { _mm_sfence(); }

#else  // not x86-64: HasAvx512ForScan() is false and the scalar scan runs.

bool HasAvx512ForScan() { return false; }

template <typename T>
int64_t ScanLinesInLanes(const ScanGeometry&, T, const T*, T*, int64_t, int64_t, bool) {
  return 0;
}

template <typename T>
void ScanColumnsInLanes(const ScanGeometry&, T, const T*, T*, int64_t, int64_t, int64_t, bool) {}

void FenceScanStores() {}

#endif

template int64_t ScanLinesInLanes<float>(const ScanGeometry&, float, const float*, float*, int64_t, int64_t,
                                         bool);
template int64_t ScanLinesInLanes<double>(const ScanGeometry&, double, const double*, double*, int64_t,
                                          int64_t, bool);
template void ScanColumnsInLanes<float>(const ScanGeometry&, float, const float*, float*, int64_t, int64_t,
                                        int64_t, bool);
template void ScanColumnsInLanes<double>(const ScanGeometry&, double, const double*, double*, int64_t,
                                         int64_t, int64_t, bool);

}  // namespace kiln::cpu
