#include "backends/cpu/data_movement_thunks.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

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
    for (int64_t i = 0; i < inner; ++i) out[done + i] = source[i * inner_stride];
    // Advance the outer dimensions (an odometer over all but the innermost).
    for (size_t d = rank - 1; d-- > 0;) {
      in_offset += in_strides[d];
      if (++index[d] < out_dims[d]) break;
      in_offset -= in_strides[d] * out_dims[d];
      index[d] = 0;
    }
  }
}

// Tile edge of the blocked transpose: 32 x 32 elements read 32 input lines
// and write 32 output lines, all of which stay in the L1 cache meanwhile.
constexpr int64_t kTransposeTile = 32;
// Elements a parallel task should move at least.
constexpr int64_t kTransposeElementsPerTask = 64 * 1024;
// Outputs of at least this many bytes (twice a core's L2 here) are written
// with streaming stores where whole aligned 64-byte lines allow: the lines
// would leave the cache before they are read again anyway, and a plain store
// first reads each line (a third of the traffic). On the 2-core AVX-512 VM,
// a 4096^2 f32 transpose took 5.7 ms streaming and 25.7 ms without (busy).
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

// Stores one 64-byte output line segment: past the caches when `streaming`
// (the caller made sure it is 64-byte aligned), so a large transpose's
// output neither reads its lines first nor evicts the input.
__attribute__((target("avx512f"))) inline void StoreLine(void* out, __m512i line, bool streaming) {
  if (streaming) {
    _mm512_stream_si512(static_cast<__m512i*>(out), line);
  } else {
    _mm512_storeu_si512(out, line);
  }
}

// The AVX-512 shuffles, written as their masked forms with every lane
// selected: the plain intrinsics pass GCC 12 an "undefined" merge source
// that -Wuninitialized (an error here) reports once they are inlined.
constexpr __mmask16 kEveryLane16 = 0xffff;
constexpr __mmask8 kEveryLane8 = 0xff;
__attribute__((target("avx512f"))) inline __m512i UnpackLow32(__m512i a, __m512i b) {
  return _mm512_mask_unpacklo_epi32(a, kEveryLane16, a, b);
}
__attribute__((target("avx512f"))) inline __m512i UnpackHigh32(__m512i a, __m512i b) {
  return _mm512_mask_unpackhi_epi32(a, kEveryLane16, a, b);
}
__attribute__((target("avx512f"))) inline __m512i UnpackLow64(__m512i a, __m512i b) {
  return _mm512_mask_unpacklo_epi64(a, kEveryLane8, a, b);
}
__attribute__((target("avx512f"))) inline __m512i UnpackHigh64(__m512i a, __m512i b) {
  return _mm512_mask_unpackhi_epi64(a, kEveryLane8, a, b);
}
// 128-bit lanes: the even (`kEvenQuarters`) or odd (`kOddQuarters`) lanes of a, then those of b.
constexpr int kEvenQuarters = 0x88;
constexpr int kOddQuarters = 0xdd;
template <int kLanes>
__attribute__((target("avx512f"))) inline __m512i SwapLanes(__m512i a, __m512i b) {
  return _mm512_mask_shuffle_i64x2(a, kEveryLane8, a, b, kLanes);
}

// Sixteen input lines of sixteen 4-byte elements become sixteen output lines
// in registers: 32-bit pairs, 64-bit pairs, then 128-bit lanes twice.
__attribute__((target("avx512f"))) inline void Transpose16x16(const void* in, int64_t in_stride, void* out,
                                                              int64_t out_stride, bool streaming) {
  const auto* source = static_cast<const uint32_t*>(in);
  auto* target = static_cast<uint32_t*>(out);
  __m512i r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_si512(source + i * in_stride);
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
      t[i + j] = SwapLanes<kEvenQuarters>(r[i + j], r[i + j + 4]);
      t[i + j + 4] = SwapLanes<kOddQuarters>(r[i + j], r[i + j + 4]);
    }
  }
  for (int j = 0; j < 8; ++j) {
    StoreLine(target + j * out_stride, SwapLanes<kEvenQuarters>(t[j], t[j + 8]), streaming);
    StoreLine(target + (j + 8) * out_stride, SwapLanes<kOddQuarters>(t[j], t[j + 8]), streaming);
  }
}

// Eight input lines of eight 8-byte elements become eight output lines:
// 64-bit pairs, then 128-bit lanes twice.
__attribute__((target("avx512f"))) inline void Transpose8x8Wide(const void* in, int64_t in_stride, void* out,
                                                                int64_t out_stride, bool streaming) {
  const auto* source = static_cast<const uint64_t*>(in);
  auto* target = static_cast<uint64_t*>(out);
  __m512i r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm512_loadu_si512(source + i * in_stride);
  for (int i = 0; i < 8; i += 2) {
    t[i] = UnpackLow64(r[i], r[i + 1]);
    t[i + 1] = UnpackHigh64(r[i], r[i + 1]);
  }
  // t[2p + q] holds, in 128-bit lane l, input lines 2p, 2p+1 at column 2l+q.
  for (int q = 0; q < 2; ++q) {
    const __m512i even_low = SwapLanes<kEvenQuarters>(t[q], t[2 + q]);
    const __m512i odd_low = SwapLanes<kOddQuarters>(t[q], t[2 + q]);
    const __m512i even_high = SwapLanes<kEvenQuarters>(t[4 + q], t[6 + q]);
    const __m512i odd_high = SwapLanes<kOddQuarters>(t[4 + q], t[6 + q]);
    StoreLine(target + q * out_stride, SwapLanes<kEvenQuarters>(even_low, even_high), streaming);
    StoreLine(target + (4 + q) * out_stride, SwapLanes<kOddQuarters>(even_low, even_high), streaming);
    StoreLine(target + (2 + q) * out_stride, SwapLanes<kEvenQuarters>(odd_low, odd_high), streaming);
    StoreLine(target + (6 + q) * out_stride, SwapLanes<kOddQuarters>(odd_low, odd_high), streaming);
  }
}

// A tile of 4- or 8-byte elements as 64-byte-line register transposes
// (16 x 16 or 8 x 8), the ragged edges element by element. A block streams
// its stores when `streaming` and its output lines are 64-byte aligned.
template <typename E>
__attribute__((target("avx512f"))) void TransposeTileAvx512(const E* in, int64_t in_stride, E* out,
                                                            int64_t out_stride, int64_t rows, int64_t columns,
                                                            bool streaming) {
  constexpr int64_t kEdge = 64 / sizeof(E);
  const int64_t full_rows = rows / kEdge * kEdge, full_columns = columns / kEdge * kEdge;
  const bool aligned_stride = out_stride * static_cast<int64_t>(sizeof(E)) % 64 == 0;
  for (int64_t c = 0; c < full_columns; c += kEdge) {
    for (int64_t r = 0; r < full_rows; r += kEdge) {
      E* target = out + c * out_stride + r;
      const bool stream = streaming && aligned_stride && reinterpret_cast<uintptr_t>(target) % 64 == 0;
      if constexpr (sizeof(E) == 4) {
        Transpose16x16(in + r * in_stride + c, in_stride, target, out_stride, stream);
      } else {
        Transpose8x8Wide(in + r * in_stride + c, in_stride, target, out_stride, stream);
      }
    }
  }
  TransposeTile(in + full_rows * in_stride, in_stride, out + full_rows, out_stride, rows - full_rows,
                full_columns);
  TransposeTile(in + full_columns, in_stride, out + full_columns * out_stride, out_stride, rows,
                columns - full_columns);
}

bool HasAvx() {
  static const bool has_avx = __builtin_cpu_supports("avx");
  return has_avx;
}

bool HasAvx512() {
  static const bool has_avx512 = __builtin_cpu_supports("avx512f");
  return has_avx512;
}

// Makes a task's streaming stores visible before the thread pool reports it done.
void FenceStreamingStores() { _mm_sfence(); }
#else
void FenceStreamingStores() {}
#endif

template <typename E>
void TransposeTileFastest(const E* in, int64_t in_stride, E* out, int64_t out_stride, int64_t rows,
                          int64_t columns, bool streaming) {
#if defined(__x86_64__)
  if constexpr (sizeof(E) == 4 || sizeof(E) == 8) {
    if (HasAvx512()) return TransposeTileAvx512(in, in_stride, out, out_stride, rows, columns, streaming);
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

// The transpose when the input's minor dimension moves: reading each output
// line straight would touch a new input cache line per element, so square
// tiles are copied instead, (slab, band of output lines) pairs in parallel.
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
  const int64_t bands = (rows + kTransposeTile - 1) / kTransposeTile;
  const bool streaming = count * static_cast<int64_t>(sizeof(E)) >= kStreamingTransposeBytes;
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      int64_t slab = task / bands;
      const int64_t r0 = task % bands * kTransposeTile;
      const int64_t band_rows = std::min(rows - r0, kTransposeTile);
      int64_t in_offset = r0 * row_stride, out_offset = r0;
      for (auto it = others.rbegin(); it != others.rend(); ++it) {
        const int64_t index = slab % out_dims[*it];
        slab /= out_dims[*it];
        in_offset += index * in_strides[*it];
        out_offset += index * out_strides[*it];
      }
      for (int64_t c0 = 0; c0 < columns; c0 += kTransposeTile) {
        TransposeTileFastest(in + in_offset + c0, row_stride, out + out_offset + c0 * column_stride,
                             column_stride, band_rows, std::min(columns - c0, kTransposeTile), streaming);
      }
    }
    if (streaming) FenceStreamingStores();
  };
  const int64_t tasks = slabs * bands;
  const int64_t grain =
      std::max<int64_t>(1, kTransposeElementsPerTask / std::max<int64_t>(1, kTransposeTile * columns));
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
