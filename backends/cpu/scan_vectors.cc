#include "backends/cpu/scan_vectors.h"

#include <algorithm>

#include "backends/cpu/avx512_lanes.h"
#include "backends/cpu/avx512_transpose.h"

namespace kiln::cpu {

#if defined(__x86_64__)
namespace {

// The running vectors of a block of columns (kScanColumnsPerBlock).
constexpr int64_t kScanVectorsPerBlock = kScanColumnsPerBlock<float> / kAvx512LaneCount<float>;

// One scan step on every lane: held = op(held, next), the interpreter's
// operation. A reverse maximum or minimum is op(next, held): the window's
// first NaN and, among equal values, its last, as the window's order gives.
template <typename T, ScanOp kOp, bool kReverse>
KILN_AVX512_LANES __attribute__((always_inline)) inline typename Avx512Lanes<T>::Vector ScanStep(
    typename Avx512Lanes<T>::Vector held, typename Avx512Lanes<T>::Vector next) {
  using L = Avx512Lanes<T>;
  switch (kOp) {
    case ScanOp::kAdd: return L::Add(held, next);
    case ScanOp::kMultiply: return L::Mul(held, next);
    case ScanOp::kMaximum: return kReverse ? L::Maximum(next, held) : L::Maximum(held, next);
    case ScanOp::kMinimum: return kReverse ? L::Minimum(next, held) : L::Minimum(held, next);
  }
  return held;
}

// r[i] holds element j of line i in lane j; afterwards r[j] holds element j
// of line i in lane i.
template <typename T>
KILN_AVX512_LANES __attribute__((always_inline)) inline void TransposeLanes(
    typename Avx512Lanes<T>::Vector* r) {
  using L = Avx512Lanes<T>;
  __m512i bits[L::kCount];
#pragma GCC unroll 16
  for (int k = 0; k < L::kCount; ++k) bits[k] = L::Bits(r[k]);
  TransposeLines<L::kCount>(bits);
#pragma GCC unroll 16
  for (int k = 0; k < L::kCount; ++k) r[k] = L::FromBits(bits[k]);
}

// r[k] holds n (kFullChunk: all lanes) elements of line k in scan order's
// memory order; each lane of `held` is its line's running value. Scans the
// n elements of every line, in place.
template <typename T, ScanOp kOp, bool kReverse, bool kFullChunk>
KILN_AVX512_LANES __attribute__((always_inline)) inline void ScanBlockInRegisters(
    typename Avx512Lanes<T>::Vector& held, typename Avx512Lanes<T>::Vector* r, int64_t n) {
  constexpr int kLanes = Avx512Lanes<T>::kCount;
  TransposeLanes<T>(r);
#pragma GCC unroll 16
  for (int j = 0; j < kLanes; ++j) {
    const int s = kReverse ? kLanes - 1 - j : j;
    if (kFullChunk || s < n) {
      held = ScanStep<T, kOp, kReverse>(held, r[s]);
      r[s] = held;
    }
  }
  TransposeLanes<T>(r);
}

// One block of a line group: elements [c, c + n) of `rows` lines from `in`
// and `out` on, `length` apart, scanned in registers. kFullRows: rows is the
// vector's lanes; kFullChunk: n is. Otherwise the loads and stores are
// masked (a lane past `rows` neither reads nor writes: its mask is empty).
template <typename T, ScanOp kOp, bool kReverse, bool kFullRows, bool kFullChunk>
KILN_AVX512_LANES __attribute__((always_inline)) inline void ScanLineBlock(
    typename Avx512Lanes<T>::Vector& held, const T* in, T* out, int64_t length, int64_t rows, int64_t c,
    int64_t n, bool stream) {
  using L = Avx512Lanes<T>;
  constexpr int kLanes = L::kCount;
  constexpr bool kWhole = kFullRows && kFullChunk;
  const typename L::Mask chunk = L::Prefix(n);
  typename L::Vector r[kLanes];
#pragma GCC unroll 16
  for (int k = 0; k < kLanes; ++k) {
    if constexpr (kWhole) {
      r[k] = L::Load(in + k * length + c);
    } else {
      const bool live = kFullRows || k < rows;
      r[k] = L::Load(live ? chunk : 0, live ? in + k * length + c : in);
    }
  }
  ScanBlockInRegisters<T, kOp, kReverse, kFullChunk>(held, r, n);
#pragma GCC unroll 16
  for (int k = 0; k < kLanes; ++k) {
    if constexpr (kWhole) {
      if (stream) {
        L::StoreStreaming(out + k * length + c, r[k]);
      } else {
        L::Store(out + k * length + c, r[k]);
      }
    } else {
      const bool live = kFullRows || k < rows;
      L::Store(live ? out + k * length + c : out, live ? chunk : 0, r[k]);
    }
  }
}

// `rows` (at most a vector's lanes) lines of `length` elements from `in` and
// `out` on, a block of lanes x lanes elements at a time (the last, or in
// reverse the first, partial). `stream`: non-temporal stores where the
// output lines are 64-byte aligned.
template <typename T, ScanOp kOp, bool kReverse, bool kFullRows>
KILN_AVX512_LANES void ScanLineGroup(T initial, const T* in, T* out, int64_t length, int64_t rows,
                                     bool stream) {
  using L = Avx512Lanes<T>;
  constexpr int kLanes = L::kCount;
  const bool aligned = reinterpret_cast<uintptr_t>(out) % 64 == 0 && length * sizeof(T) % 64 == 0;
  stream = stream && aligned;
  typename L::Vector held = L::Set(initial);
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

// x86 cores tell a load from an earlier store by the low 12 bits of their
// addresses first: a load whose bits match a store still in flight waits
// for it (4K aliasing), even at another address.
constexpr int64_t kAliasingBytes = 4096;
// How far (in bytes, modulo kAliasingBytes) the result may sit ahead of the
// input, in the scan's direction, for the loads of the next blocks of a
// line group to match the stores of the block before. Measured on one
// thread of an AMD EPYC (f32[64,1024], ns per element): 64 bytes ahead
// 0.51, 128 0.28, 160 0.32, 192 and more or none 0.20-0.22.
constexpr int64_t kAliasedBytesAhead = 192;

// Whether ScanLineGroup's loads would wait on its own stores: lines a
// multiple of 4 KiB long give every line of a group the same low address
// bits, so each load of the next block matches all of the group's stores
// of the block before where the result is 1 to 2.5 blocks ahead of the
// input (as glibc's malloc places two buffers one after the other: 128
// bytes apart modulo 4 KiB), and each block waits for the one before: half
// the speed or worse. Other lengths match at most one store a load.
template <typename T>
bool LineGroupStoresAliasLoads(const T* in, const T* out, int64_t length, bool reverse) {
  if (length * static_cast<int64_t>(sizeof(T)) % kAliasingBytes != 0) return false;
  const auto distance =
      static_cast<int64_t>(reinterpret_cast<uintptr_t>(out) - reinterpret_cast<uintptr_t>(in));
  const int64_t ahead = (distance % kAliasingBytes + kAliasingBytes) % kAliasingBytes;
  const int64_t ahead_in_scan_order = reverse && ahead != 0 ? kAliasingBytes - ahead : ahead;
  return ahead_in_scan_order > 0 && ahead_in_scan_order < kAliasedBytesAhead;
}

// What every step of ScanStaggeredLines reads: lane k of the step is at
// element base + offset[k] of `in` and `out`.
template <typename T>
struct StaggeredStep {
  const T* in;
  T* out;
  const int64_t* offset;
  int64_t base;
  bool stream;  // non-temporal stores (every line 64-byte aligned)
};

// One step of ScanStaggeredLines: scans the block of each lane in `live`
// (kEveryLaneLive: all) and resets `first_block`'s lanes (at most one) to
// `start` first. Without kEveryLaneLive, lanes outside `live` (still to
// start or done) neither load nor store.
template <typename T, ScanOp kOp, bool kReverse, bool kEveryLaneLive>
KILN_AVX512_LANES __attribute__((always_inline)) inline void ScanStaggeredBlock(
    const StaggeredStep<T>& step, typename Avx512Lanes<T>::Vector& held,
    typename Avx512Lanes<T>::Vector start, typename Avx512Lanes<T>::Mask first_block,
    typename Avx512Lanes<T>::Mask live) {
  using L = Avx512Lanes<T>;
  constexpr int kLanes = L::kCount;
  const T* in = step.in + step.base;
  T* out = step.out + step.base;
  const typename L::Mask every_lane = L::Prefix(kLanes);
  typename L::Vector r[kLanes];
#pragma GCC unroll 16
  for (int k = 0; k < kLanes; ++k) {
    if constexpr (kEveryLaneLive) {
      r[k] = L::Load(in + step.offset[k]);
    } else {
      const bool lane_live = (live >> k) & 1;
      r[k] = L::Load(lane_live ? every_lane : 0, lane_live ? in + step.offset[k] : step.in);
    }
  }
  held = L::Blend(first_block, held, start);
  ScanBlockInRegisters<T, kOp, kReverse, true>(held, r, kLanes);
#pragma GCC unroll 16
  for (int k = 0; k < kLanes; ++k) {
    if constexpr (kEveryLaneLive) {
      if (step.stream) {
        L::StoreStreaming(out + step.offset[k], r[k]);
      } else {
        L::Store(out + step.offset[k], r[k]);
      }
    } else {
      const bool lane_live = (live >> k) & 1;
      L::Store(lane_live ? out + step.offset[k] : step.out, lane_live ? every_lane : 0, r[k]);
    }
  }
}

// `groups` groups of lanes-many lines of `length` elements (a multiple of
// the lanes, at least lanes blocks) from `in` and `out` on, scanned as
// ScanLineGroup does but with lane k one block behind lane k - 1, so that
// where LineGroupStoresAliasLoads each load matches one earlier store, not
// all of a block's. Lane k scans lines k, k + lanes, k + 2 * lanes, ... one
// after the other, its running value reset to `initial` at each line's
// first block, so the lanes wait for their turn only at the start and
// drain only at the end of all the groups, not of each. Each lane's
// operations and their order are its line's, as in ScanLineGroup.
template <typename T, ScanOp kOp, bool kReverse>
KILN_AVX512_LANES void ScanStaggeredLines(T initial, const T* in, T* out, int64_t length, int64_t groups,
                                          bool stream) {
  using L = Avx512Lanes<T>;
  using Mask = typename L::Mask;
  constexpr int kLanes = L::kCount;
  const int64_t blocks = length / kLanes;
  // With lane 0 at block b of group g, lane k is at block b - k of line
  // g * lanes + k, or where k > b, at block b - k + blocks of the group
  // before. Its element is lane 0's plus k * lane_stride (the line below,
  // a block back: forward, back in memory; reverse, a block from the end
  // is on in memory), less `wrap` in the group before.
  const int64_t lane_stride = kReverse ? length + kLanes : length - kLanes;
  const int64_t wrap = kReverse ? (kLanes + 1) * length : (kLanes - 1) * length;
  int64_t offset[kLanes];
  StaggeredStep<T> step{in, out, offset, 0,
                        stream && reinterpret_cast<uintptr_t>(out) % 64 == 0 && length * sizeof(T) % 64 == 0};
  const typename L::Vector start = L::Set(initial);
  typename L::Vector held = start;
  const int64_t steps = groups * blocks + kLanes - 1;
  int64_t group = 0, block = 0;
  for (int64_t t = 0; t < steps; ++t) {
    if (block == 0) {
      for (int k = 0; k < kLanes; ++k) offset[k] = k * lane_stride - (k > 0 ? wrap : 0);
    } else if (block < kLanes) {
      offset[block] += wrap;  // lane `block` moves on to this group
    }
    step.base = group * kLanes * length + (kReverse ? length - kLanes - block * kLanes : block * kLanes);
    const Mask first_block = block < kLanes ? static_cast<Mask>(1u << block) : 0;
    if (t >= kLanes - 1 && t < groups * blocks) {
      ScanStaggeredBlock<T, kOp, kReverse, true>(step, held, start, first_block, 0);
    } else {
      Mask live = 0;  // lanes whose group is one of the groups
      for (int k = 0; k < kLanes; ++k) {
        const int64_t lane_group = group - (k > block ? 1 : 0);
        if (lane_group >= 0 && lane_group < groups) live |= static_cast<Mask>(1u << k);
      }
      ScanStaggeredBlock<T, kOp, kReverse, false>(step, held, start, first_block, live);
    }
    if (++block == blocks) {
      block = 0;
      ++group;
    }
  }
}

// A block of `width` (at most kScanVectorsPerBlock vectors) adjacent columns
// from `in` and `out` on, rows `inner` elements apart: a running vector per
// vector of columns walks the scanned dimension. kFull: every vector whole.
// `stream`: non-temporal stores where the rows are 64-byte aligned.
template <typename T, ScanOp kOp, bool kReverse, bool kFull>
KILN_AVX512_LANES void ScanColumnBlock(T initial, const T* in, T* out, int64_t length, int64_t inner,
                                       int64_t width, bool stream) {
  using L = Avx512Lanes<T>;
  constexpr int kLanes = L::kCount;
  // Whole vectors are 64-byte aligned in every row, or in none.
  stream = stream && reinterpret_cast<uintptr_t>(out) % 64 == 0 && inner * sizeof(T) % 64 == 0;
  typename L::Vector held[kScanVectorsPerBlock];
  typename L::Mask mask[kScanVectorsPerBlock];
  for (int v = 0; v < kScanVectorsPerBlock; ++v) {
    held[v] = L::Set(initial);
    mask[v] = L::Prefix(std::clamp<int64_t>(width - v * kLanes, 0, kLanes));
  }
  for (int64_t step = 0; step < length; ++step) {
    const int64_t i = kReverse ? length - 1 - step : step;
    const T* row_in = in + i * inner;
    T* row_out = out + i * inner;
#pragma GCC unroll 8
    for (int v = 0; v < kScanVectorsPerBlock; ++v) {
      if constexpr (kFull) {
        held[v] = ScanStep<T, kOp, kReverse>(held[v], L::Load(row_in + v * kLanes));
        if (stream) {
          L::StoreStreaming(row_out + v * kLanes, held[v]);
        } else {
          L::Store(row_out + v * kLanes, held[v]);
        }
      } else if (mask[v] != 0) {
        held[v] = ScanStep<T, kOp, kReverse>(held[v], L::Load(mask[v], row_in + v * kLanes));
        L::Store(row_out + v * kLanes, mask[v], held[v]);
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

template <typename T>
int64_t ScanLinesInLanes(const ScanGeometry& geometry, T initial, const T* input, T* output,
                         int64_t first_line, int64_t last_line, bool stream) {
  constexpr int64_t kLanes = kAvx512LaneCount<T>;
  const int64_t length = geometry.length;
  int64_t line = first_line;
  // Staggered only there: elsewhere its start and drain, and its lanes'
  // spread when reading from DRAM, cost 5-10% (f32[4096,1024], one thread:
  // 0.36 against 0.32 ns per element).
  const int64_t staggered_groups = (last_line - first_line) / kLanes;
  if (staggered_groups > 0 && length / kLanes >= kLanes &&
      LineGroupStoresAliasLoads(input, output, length, geometry.reverse)) {
    WithScanKind(geometry.op, geometry.reverse, [&]<ScanOp kOp, bool kReverse>() {
      ScanStaggeredLines<T, kOp, kReverse>(initial, input + line * length, output + line * length, length,
                                           staggered_groups, stream);
    });
    line += staggered_groups * kLanes;
  }
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
  constexpr int64_t kBlock = kScanVectorsPerBlock * kAvx512LaneCount<T>;
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

#else  // not x86-64: HasAvx512Lanes() is false and the scalar scan runs.

template <typename T>
int64_t ScanLinesInLanes(const ScanGeometry&, T, const T*, T*, int64_t, int64_t, bool) {
  return 0;
}

template <typename T>
void ScanColumnsInLanes(const ScanGeometry&, T, const T*, T*, int64_t, int64_t, int64_t, bool) {}

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
