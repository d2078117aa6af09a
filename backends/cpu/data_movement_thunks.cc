#include "backends/cpu/data_movement_thunks.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "backends/cpu/avx512_lanes.h"
#include "backends/cpu/avx512_transpose.h"
#include "backends/cpu/cpu_buffer.h"
#include "backends/cpu/thread_pool.h"

namespace kiln::cpu {
namespace {

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

template <int kBytes>
struct Element {
  unsigned char bytes[kBytes];
};

template <typename E>
void PermuteCopy(const E* in, E* out, const std::vector<int64_t>& out_dims,
                 const std::vector<int64_t>& in_strides, int64_t count) {
  const size_t rank = out_dims.size();
  if (rank == 0) {
    if (count > 0) out[0] = in[0];
    return;
  }
  const int64_t inner = out_dims[rank - 1];
  const int64_t inner_stride = in_strides[rank - 1];
  std::vector<int64_t> index(rank, 0);
  int64_t in_offset = 0;
  for (int64_t done = 0; done < count; done += inner) {
    const E* source = in + in_offset;
    if (inner_stride == 1) {
      // The minor dimension stays: whole lines move.
      std::memcpy(out + done, source, static_cast<size_t>(inner) * sizeof(E));
    } else {
      for (int64_t i = 0; i < inner; ++i) out[done + i] = source[i * inner_stride];
    }
    // Advance the outer dimensions (an odometer over all but the innermost).
    for (size_t d = rank - 1; d-- > 0;) {
      in_offset += in_strides[d];
      if (++index[d] < out_dims[d]) break;
      in_offset -= in_strides[d] * out_dims[d];
      index[d] = 0;
    }
  }
}

// Tile edge of the element-by-element blocked transpose: 32 x 32 elements
// read 32 input lines and write 32 output lines, all of which stay in the
// L1 cache meanwhile.
constexpr int64_t kTransposeTile = 32;
// Elements a parallel task should move at least.
constexpr int64_t kTransposeElementsPerTask = 64 * 1024;
// Outputs of at least this many bytes (twice a core's L2 here) are written
// with streaming stores where whole aligned 64-byte lines allow: the lines
// would leave the cache before they are read again anyway, and a plain store
// first reads each line (a third of the traffic). On the 2-core AVX-512 VM,
// a 4096^2 f32 transpose took 5.7 ms streaming and 25.7 ms without (busy).
// Arrays about the L3's size (32 MiB) too: with the same tiles, NCHW ->
// NHWC of f32[32,64,56,56] (25.7 MB) best 558 us streamed against 1598
// plain, median 1.26 against 3.59 ms (14 pairs alternated, load 1-4);
// 8 MiB outputs 259 against 364 us.
constexpr int64_t kStreamingTransposeBytes = 8 << 20;

// out[c * out_stride + r] = in[r * in_stride + c] for r < rows, c < columns:
// one tile, element by element.
template <typename E>
void TransposeTile(const E* in, int64_t in_stride, E* out, int64_t out_stride, int64_t rows,
                   int64_t columns) {
  for (int64_t c = 0; c < columns; ++c) {
    E* line = out + c * out_stride;
    for (int64_t r = 0; r < rows; ++r) line[r] = in[r * in_stride + c];
  }
}

#if defined(__x86_64__)
// Eight input lines of eight 4-byte elements become eight output lines in
// registers (unpack pairs, then quads, then swap 128-bit halves); only
// moves and shuffles, so every bit pattern (NaN payloads too) is kept.
__attribute__((target("avx"))) inline void Transpose8x8(const float* in, int64_t in_stride, float* out,
                                                        int64_t out_stride) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(in + i * in_stride);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(out + i * out_stride, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
    _mm256_storeu_ps(out + (i + 4) * out_stride, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
}

// A tile of 4-byte elements as 8 x 8 register transposes, the ragged right
// and bottom edges element by element.
__attribute__((target("avx"))) void TransposeTileAvx(const float* in, int64_t in_stride, float* out,
                                                     int64_t out_stride, int64_t rows, int64_t columns) {
  const int64_t full_rows = rows / 8 * 8, full_columns = columns / 8 * 8;
  for (int64_t c = 0; c < full_columns; c += 8) {
    for (int64_t r = 0; r < full_rows; r += 8)
      Transpose8x8(in + r * in_stride + c, in_stride, out + c * out_stride + r, out_stride);
  }
  TransposeTile(in + full_rows * in_stride, in_stride, out + full_rows, out_stride, rows - full_rows,
                full_columns);
  TransposeTile(in + full_columns, in_stride, out + full_columns * out_stride, out_stride, rows,
                columns - full_columns);
}

// Sixteen lines of sixteen bytes become sixteen output lines in SSE2
// registers (the x86-64 baseline): four rounds that interleave neighbouring
// registers at 8, 16, 32 and then 64 bits leave column c in register
// bitrev4(c). Only unpacks, so every bit pattern moves unchanged.
inline void TransposeBytes16x16(const uint8_t* in, int64_t in_stride, uint8_t* out, int64_t out_stride) {
  __m128i a[16], b[16];
  for (int i = 0; i < 16; ++i) a[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i * in_stride));
  for (int i = 0; i < 8; ++i) {
    b[i] = _mm_unpacklo_epi8(a[2 * i], a[2 * i + 1]);
    b[i + 8] = _mm_unpackhi_epi8(a[2 * i], a[2 * i + 1]);
  }
  for (int i = 0; i < 8; ++i) {
    a[i] = _mm_unpacklo_epi16(b[2 * i], b[2 * i + 1]);
    a[i + 8] = _mm_unpackhi_epi16(b[2 * i], b[2 * i + 1]);
  }
  for (int i = 0; i < 8; ++i) {
    b[i] = _mm_unpacklo_epi32(a[2 * i], a[2 * i + 1]);
    b[i + 8] = _mm_unpackhi_epi32(a[2 * i], a[2 * i + 1]);
  }
  for (int i = 0; i < 8; ++i) {
    a[i] = _mm_unpacklo_epi64(b[2 * i], b[2 * i + 1]);
    a[i + 8] = _mm_unpackhi_epi64(b[2 * i], b[2 * i + 1]);
  }
  constexpr int kBitReversed4[16] = {0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15};
  for (int k = 0; k < 16; ++k)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + kBitReversed4[k] * out_stride), a[k]);
}

// Sixteen lines of sixteen 2-byte elements in AVX2 registers: the rounds at
// 16, 32 and 64 bits transpose each 128-bit half of input lines 0-7 and of
// lines 8-15 (column c, and c + 8 in the upper half, in register
// bitrev3(c)); the halves of the two groups then pair up into output lines.
__attribute__((target("avx2"))) inline void TransposeWords16x16(const uint16_t* in, int64_t in_stride,
                                                                uint16_t* out, int64_t out_stride) {
  __m256i group[2][8];
  for (int g = 0; g < 2; ++g) {
    __m256i a[8], b[8];
    for (int i = 0; i < 8; ++i)
      a[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + (8 * g + i) * in_stride));
    for (int i = 0; i < 4; ++i) {
      b[i] = _mm256_unpacklo_epi16(a[2 * i], a[2 * i + 1]);
      b[i + 4] = _mm256_unpackhi_epi16(a[2 * i], a[2 * i + 1]);
    }
    for (int i = 0; i < 4; ++i) {
      a[i] = _mm256_unpacklo_epi32(b[2 * i], b[2 * i + 1]);
      a[i + 4] = _mm256_unpackhi_epi32(b[2 * i], b[2 * i + 1]);
    }
    for (int i = 0; i < 4; ++i) {
      group[g][i] = _mm256_unpacklo_epi64(a[2 * i], a[2 * i + 1]);
      group[g][i + 4] = _mm256_unpackhi_epi64(a[2 * i], a[2 * i + 1]);
    }
  }
  constexpr int kBitReversed3[8] = {0, 4, 2, 6, 1, 5, 3, 7};
  for (int k = 0; k < 8; ++k) {
    const int c = kBitReversed3[k];
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + c * out_stride),
                        _mm256_permute2x128_si256(group[0][k], group[1][k], 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (c + 8) * out_stride),
                        _mm256_permute2x128_si256(group[0][k], group[1][k], 0x31));
  }
}

// A tile of 1- or 2-byte elements as 16 x 16 register blocks, the ragged
// right and bottom edges element by element.
template <typename E, typename Block>
void TransposeTileIn16x16Blocks(const E* in, int64_t in_stride, E* out, int64_t out_stride, int64_t rows,
                                int64_t columns, Block block) {
  const int64_t full_rows = rows / 16 * 16, full_columns = columns / 16 * 16;
  for (int64_t c = 0; c < full_columns; c += 16) {
    for (int64_t r = 0; r < full_rows; r += 16) block(in + r * in_stride + c, out + c * out_stride + r);
  }
  TransposeTile(in + full_rows * in_stride, in_stride, out + full_rows, out_stride, rows - full_rows,
                full_columns);
  TransposeTile(in + full_columns, in_stride, out + full_columns * out_stride, out_stride, rows,
                columns - full_columns);
}

bool HasAvx2() {
  static const bool has_avx2 = __builtin_cpu_supports("avx2");
  return has_avx2;
}

bool HasAvx() {
  static const bool has_avx = __builtin_cpu_supports("avx");
  return has_avx;
}

// One register block of 4- or 8-byte elements: out[c * out_stride + r] =
// in[r * in_stride + c] for r < rows, c < columns, both at most the lanes
// of a 64-byte line. A whole block moves as full lines (past the caches
// when `streaming`: the caller checked that its output lines are 64-byte
// aligned); a partial one (a tile's ragged edge) reads and writes only its
// lanes through masks, so no byte outside the arrays is touched.
template <typename E>
KILN_AVX512_LANES inline void TransposeBlockAvx512(const E* in, int64_t in_stride, E* out, int64_t out_stride,
                                                   int64_t rows, int64_t columns, bool streaming) {
  constexpr int kLanes = static_cast<int>(kAvx512LaneCount<E>);
  __m512i r[kLanes];
  if (rows == kLanes && columns == kLanes) {
    for (int i = 0; i < kLanes; ++i) r[i] = _mm512_loadu_si512(in + i * in_stride);
    TransposeLines<kLanes>(r);
    for (int j = 0; j < kLanes; ++j) {
      if (streaming) {
        _mm512_stream_si512(reinterpret_cast<__m512i*>(out + j * out_stride), r[j]);
      } else {
        _mm512_storeu_si512(out + j * out_stride, r[j]);
      }
    }
    return;
  }
  const auto lanes = [](int64_t count) { return static_cast<uint32_t>((uint64_t{1} << count) - 1); };
  for (int i = 0; i < kLanes; ++i) {
    if (i >= rows) {
      r[i] = _mm512_setzero_si512();
    } else if constexpr (kLanes == 16) {
      r[i] = _mm512_maskz_loadu_epi32(static_cast<__mmask16>(lanes(columns)), in + i * in_stride);
    } else {
      r[i] = _mm512_maskz_loadu_epi64(static_cast<__mmask8>(lanes(columns)), in + i * in_stride);
    }
  }
  TransposeLines<kLanes>(r);
  for (int j = 0; j < columns; ++j) {
    if constexpr (kLanes == 16) {
      _mm512_mask_storeu_epi32(out + j * out_stride, static_cast<__mmask16>(lanes(rows)), r[j]);
    } else {
      _mm512_mask_storeu_epi64(out + j * out_stride, static_cast<__mmask8>(lanes(rows)), r[j]);
    }
  }
}

// A tile of 4- or 8-byte elements as register blocks. A block streams its
// stores when `streaming` and its output lines are 64-byte aligned.
template <typename E>
KILN_AVX512_LANES void TransposeTileAvx512(const E* in, int64_t in_stride, E* out, int64_t out_stride,
                                           int64_t rows, int64_t columns, bool streaming) {
  constexpr int64_t kLanes = kAvx512LaneCount<E>;
  const bool aligned_stride = out_stride * static_cast<int64_t>(sizeof(E)) % 64 == 0;
  for (int64_t c = 0; c < columns; c += kLanes) {
    for (int64_t r = 0; r < rows; r += kLanes) {
      E* target = out + c * out_stride + r;
      const bool stream = streaming && aligned_stride && reinterpret_cast<uintptr_t>(target) % 64 == 0;
      TransposeBlockAvx512(in + r * in_stride + c, in_stride, target, out_stride, std::min(rows - r, kLanes),
                           std::min(columns - c, kLanes), stream);
    }
  }
}

// Asks for the input lines of the next tile (into L2) while this one is
// transposed: its rows lie apart, so the hardware prefetchers, which follow
// runs of neighbouring lines, would leave each load waiting on memory.
template <typename E>
void PrefetchTile(const E* in, int64_t in_stride, int64_t rows, int64_t columns) {
  const int64_t last_byte = columns * static_cast<int64_t>(sizeof(E)) - 1;
  for (int64_t r = 0; r < rows; ++r) {
    const char* line = reinterpret_cast<const char*>(in + r * in_stride);
    _mm_prefetch(line, _MM_HINT_T1);
    if (((reinterpret_cast<uintptr_t>(line) ^ reinterpret_cast<uintptr_t>(line + last_byte)) >> 6) != 0)
      _mm_prefetch(line + last_byte, _MM_HINT_T1);
  }
}

// Makes a task's streaming stores visible before the thread pool reports it done.
void FenceStreamingStores() { FenceStreamedStores(); }
#else
void FenceStreamingStores() {}
#endif

// Whether the tiles of E go through register blocks (AVX-512 for 4- and
// 8-byte elements, AVX2 for 2-byte ones, SSE2 for bytes).
template <typename E>
bool UsesRegisterBlocks() {
#if defined(__x86_64__)
  if constexpr (sizeof(E) == 4 || sizeof(E) == 8) return HasAvx512Lanes();
  if constexpr (sizeof(E) == 2) return HasAvx2();
  if constexpr (sizeof(E) == 1) return true;
#endif
  return false;
}

template <typename E>
void TransposeTileFastest(const E* in, int64_t in_stride, E* out, int64_t out_stride, int64_t rows,
                          int64_t columns, bool streaming) {
#if defined(__x86_64__)
  if constexpr (sizeof(E) == 4 || sizeof(E) == 8) {
    if (HasAvx512Lanes())
      return TransposeTileAvx512(in, in_stride, out, out_stride, rows, columns, streaming);
  }
  if constexpr (sizeof(E) == 1) {
    return TransposeTileIn16x16Blocks(in, in_stride, out, out_stride, rows, columns,
                                      [&](const E* from, E* to) {
                                        TransposeBytes16x16(reinterpret_cast<const uint8_t*>(from), in_stride,
                                                            reinterpret_cast<uint8_t*>(to), out_stride);
                                      });
  }
  if constexpr (sizeof(E) == 2) {
    if (HasAvx2()) {
      return TransposeTileIn16x16Blocks(
          in, in_stride, out, out_stride, rows, columns, [&](const E* from, E* to) {
            TransposeWords16x16(reinterpret_cast<const uint16_t*>(from), in_stride,
                                reinterpret_cast<uint16_t*>(to), out_stride);
          });
    }
  }
  if constexpr (sizeof(E) == 4) {
    if (HasAvx()) {
      return TransposeTileAvx(reinterpret_cast<const float*>(in), in_stride, reinterpret_cast<float*>(out),
                              out_stride, rows, columns);
    }
  }
#endif
  (void)streaming;
  TransposeTile(in, in_stride, out, out_stride, rows, columns);
}

// The tile of a blocked transpose: `rows` input lines (along the output's
// minor dimension) by `columns` input elements. A transpose that streams
// (its arrays are past the caches) through register blocks takes tiles of
// kStreamingTileLines input lines of one 64-byte line each (one block wide
// for f32 and f64, four f32 or eight f64 blocks tall: output lines of 256
// or 512 bytes), the next tile's input prefetched: on the AMD VM (2
// threads, busy, best of 8) that took a (2,0,1) permute of f32[256,256,256]
// from 7.4 to 2.7 ms, NCHW -> NHWC of f32[32,64,56,56] from 2.5 to 0.9 ms
// and a 4096^2 transpose from 4.1 to 3.1 ms against 32 x 32 tiles; 32 x 32,
// 64 x 32, 32 x 64 and 16 x 64 tiles were each slower on one of the three,
// and 32 lines (f64) slower than 64; f16 (2,0,1) of 256^3 went from 13.7 to
// 2.4 ms. Arrays that stay in the caches (a 1024^2 f32 transpose: 121 us
// against 140 us, 154 us prefetched) keep square 32 x 32 tiles without
// prefetches, as does the element-by-element path.
constexpr int64_t kStreamingTileLines = 64;

struct TransposeTileShape {
  int64_t rows;
  int64_t columns;
};

template <typename E>
TransposeTileShape TileShapeFor(bool streaming) {
#if defined(__x86_64__)
  if (streaming && UsesRegisterBlocks<E>())
    return {kStreamingTileLines, 64 / static_cast<int64_t>(sizeof(E))};
#endif
  return {kTransposeTile, kTransposeTile};
}

// The transpose when the input's minor dimension moves: reading each output
// line straight would touch a new input cache line per element, so tiles are
// copied instead, (slab, band of output lines, tile) triples in parallel.
// `column` is the output dimension that is the input's minor one.
template <typename E>
void BlockedTranspose(const E* in, E* out, const std::vector<int64_t>& out_dims,
                      const std::vector<int64_t>& in_strides, int64_t count, size_t column,
                      const IntraOpThreadPool* pool) {
  const size_t rank = out_dims.size();
  std::vector<int64_t> out_strides(rank, 1);
  for (size_t d = rank - 1; d-- > 0;) out_strides[d] = out_strides[d + 1] * out_dims[d + 1];
  std::vector<size_t> others;
  int64_t slabs = 1;
  for (size_t d = 0; d + 1 < rank; ++d) {
    if (d == column) continue;
    others.push_back(d);
    slabs *= out_dims[d];
  }
  const int64_t rows = out_dims[rank - 1];   // along the output's minor dimension
  const int64_t columns = out_dims[column];  // along the input's minor dimension
  const int64_t row_stride = in_strides[rank - 1];
  const int64_t column_stride = out_strides[column];
  const bool streaming = count * static_cast<int64_t>(sizeof(E)) >= kStreamingTransposeBytes;
  const TransposeTileShape tile = TileShapeFor<E>(streaming);
  const int64_t bands = (rows + tile.rows - 1) / tile.rows;
  const int64_t tiles_per_band = (columns + tile.columns - 1) / tile.columns;
  [[maybe_unused]] const bool prefetch = streaming && UsesRegisterBlocks<E>();
  // Task t is tile t % tiles_per_band of band (t / tiles_per_band) % bands
  // of slab t / (tiles_per_band * bands): the tiles of a band read the same
  // input lines one after the other.
  struct Tile {
    int64_t in_offset, out_offset, rows, columns;
  };
  auto tile_of = [&](int64_t task) {
    const int64_t c0 = task % tiles_per_band * tile.columns;
    const int64_t r0 = task / tiles_per_band % bands * tile.rows;
    int64_t slab = task / tiles_per_band / bands;
    int64_t in_offset = r0 * row_stride + c0, out_offset = r0 + c0 * column_stride;
    for (auto it = others.rbegin(); it != others.rend(); ++it) {
      const int64_t index = slab % out_dims[*it];
      slab /= out_dims[*it];
      in_offset += index * in_strides[*it];
      out_offset += index * out_strides[*it];
    }
    return Tile{in_offset, out_offset, std::min(rows - r0, tile.rows), std::min(columns - c0, tile.columns)};
  };
  auto run = [&](int64_t begin, int64_t end) {
    Tile here = tile_of(begin);
    for (int64_t task = begin; task < end; ++task) {
      Tile next{};
      if (task + 1 < end) {
        next = tile_of(task + 1);
#if defined(__x86_64__)
        if (prefetch) PrefetchTile(in + next.in_offset, row_stride, next.rows, next.columns);
#endif
      }
      TransposeTileFastest(in + here.in_offset, row_stride, out + here.out_offset, column_stride, here.rows,
                           here.columns, streaming);
      here = next;
    }
    if (streaming) FenceStreamingStores();
  };
  const int64_t tasks = slabs * bands * tiles_per_band;
  const int64_t grain = std::max<int64_t>(1, kTransposeElementsPerTask / (tile.rows * tile.columns));
  if (tasks <= grain || pool == nullptr || pool->num_threads() == 1) {
    run(0, tasks);
  } else {
    pool->ParallelFor(tasks, grain, run);
  }
}

template <typename E>
void Transpose(const E* in, E* out, const std::vector<int64_t>& out_dims,
               const std::vector<int64_t>& in_strides, int64_t count, const IntraOpThreadPool* pool) {
  const size_t rank = out_dims.size();
  if (rank >= 2 && in_strides[rank - 1] != 1) {
    for (size_t d = rank - 1; d-- > 0;) {
      if (in_strides[d] == 1 && out_dims[d] > 1)
        return BlockedTranspose(in, out, out_dims, in_strides, count, d, pool);
    }
  }
  PermuteCopy(in, out, out_dims, in_strides, count);
}

}  // namespace

const Instruction* LoneTranspose(const Instruction& fusion) {
  if (fusion.opcode != Opcode::kFusion || fusion.called.size() != 1 || fusion.operands.size() != 1)
    return nullptr;
  const Instruction* root = fusion.called[0]->root();
  if (root == nullptr || root->opcode != Opcode::kTranspose || root->operands.size() != 1 ||
      root->operand(0)->opcode != Opcode::kParameter || !root->shape.IsArray())
    return nullptr;
  return root;
}

int64_t ReadIndex(const void* data, ElementType type) {
  switch (type) {
    case ElementType::kPred: return *static_cast<const bool*>(data) ? 1 : 0;
    case ElementType::kS8: return *static_cast<const int8_t*>(data);
    case ElementType::kS16: return *static_cast<const int16_t*>(data);
    case ElementType::kS32: return *static_cast<const int32_t*>(data);
    case ElementType::kS64: return *static_cast<const int64_t*>(data);
    case ElementType::kU8: return *static_cast<const uint8_t*>(data);
    case ElementType::kU16: return *static_cast<const uint16_t*>(data);
    case ElementType::kU32: return *static_cast<const uint32_t*>(data);
    case ElementType::kU64: {
      const uint64_t value = *static_cast<const uint64_t*>(data);
      return value > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(value);
    }
    default: return 0;
  }
}

TransposeThunk::TransposeThunk(int input, int output, const Shape& input_shape,
                               std::vector<int64_t> permutation)
    : Thunk({input}, {output}),
      element_bytes_(ByteWidth(input_shape.element_type())),
      element_count_(input_shape.element_count()) {
  const std::vector<int64_t> strides = RowMajorStrides(input_shape.dimensions());
  // Dimensions of one are dropped and output neighbours that are neighbours
  // in the input too are merged (NCHW -> NHWC is then a batch of [C, H*W]
  // -> [H*W, C] transposes), so tiles run along the longest lines there are.
  for (int64_t d : permutation) {
    const int64_t size = input_shape.dimensions(d);
    const int64_t stride = strides[static_cast<size_t>(d)];
    if (size == 1) continue;
    if (!out_dims_.empty() && in_strides_.back() == stride * size) {
      out_dims_.back() *= size;
      in_strides_.back() = stride;
      continue;
    }
    out_dims_.push_back(size);
    in_strides_.push_back(stride);
  }
}

Status TransposeThunk::Run(ExecutionContext& context) const {
  const void* in = context.slots[inputs_[0]];
  void* out = context.slots[outputs_[0]];
  if (element_count_ == 0) return OkStatus();
  switch (element_bytes_) {
    case 1:
      Transpose(static_cast<const Element<1>*>(in), static_cast<Element<1>*>(out), out_dims_, in_strides_,
                element_count_, context.pool);
      break;
    case 2:
      Transpose(static_cast<const Element<2>*>(in), static_cast<Element<2>*>(out), out_dims_, in_strides_,
                element_count_, context.pool);
      break;
    case 4:
      Transpose(static_cast<const Element<4>*>(in), static_cast<Element<4>*>(out), out_dims_, in_strides_,
                element_count_, context.pool);
      break;
    case 8:
      Transpose(static_cast<const Element<8>*>(in), static_cast<Element<8>*>(out), out_dims_, in_strides_,
                element_count_, context.pool);
      break;
    case 16:
      Transpose(static_cast<const Element<16>*>(in), static_cast<Element<16>*>(out), out_dims_, in_strides_,
                element_count_, context.pool);
      break;
    default: return Internal("cpu: transpose of ", element_bytes_, "-byte elements");
  }
  return OkStatus();
}

DynamicUpdateSliceThunk::DynamicUpdateSliceThunk(std::vector<int> inputs, int output, const Shape& operand,
                                                 const Shape& update, std::vector<ElementType> index_types)
    : Thunk(std::move(inputs), {output}),
      operand_dims_(operand.dimensions()),
      update_dims_(update.dimensions()),
      index_types_(std::move(index_types)),
      element_bytes_(ByteWidth(operand.element_type())) {}

Status DynamicUpdateSliceThunk::Run(ExecutionContext& context) const {
  const auto* operand = static_cast<const std::byte*>(context.slots[inputs_[0]]);
  const auto* update = static_cast<const std::byte*>(context.slots[inputs_[1]]);
  auto* out = static_cast<std::byte*>(context.slots[outputs_[0]]);
  const size_t rank = operand_dims_.size();
  int64_t operand_count = 1, update_count = 1;
  for (size_t d = 0; d < rank; ++d) {
    operand_count *= operand_dims_[d];
    update_count *= update_dims_[d];
  }
  // Not in place: start from a copy of the operand.
  if (out != operand) std::memcpy(out, operand, static_cast<size_t>(operand_count * element_bytes_));
  if (update_count == 0) return OkStatus();
  // Start indices are clamped so the update fits (XLA semantics).
  int64_t starts[16];
  if (rank > 16) return Unimplemented("cpu: dynamic-update-slice of rank ", rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t start = ReadIndex(context.slots[inputs_[2 + d]], index_types_[d]);
    starts[d] = std::clamp<int64_t>(start, 0, operand_dims_[d] - update_dims_[d]);
  }
  if (rank == 0) {
    std::memcpy(out, update, static_cast<size_t>(element_bytes_));
    return OkStatus();
  }
  // Copy rows of the innermost dimension.
  int64_t operand_strides[16];
  operand_strides[rank - 1] = 1;
  for (size_t d = rank - 1; d-- > 0;) operand_strides[d] = operand_strides[d + 1] * operand_dims_[d + 1];
  const int64_t row = update_dims_[rank - 1];
  const size_t row_bytes = static_cast<size_t>(row * element_bytes_);
  int64_t index[16] = {0};
  for (int64_t done = 0; done < update_count; done += row) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) offset += (starts[d] + index[d]) * operand_strides[d];
    std::memcpy(out + offset * element_bytes_, update + done * element_bytes_, row_bytes);
    for (size_t d = rank - 1; d-- > 0;) {
      if (++index[d] < update_dims_[d]) break;
      index[d] = 0;
    }
  }
  return OkStatus();
}

}  // namespace kiln::cpu
