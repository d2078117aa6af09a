#include "backends/cpu/data_movement_thunks.h"

#include <algorithm>
#include <cstring>

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

// The transpose when the input's minor dimension moves: reading each output
// line straight would touch a new input cache line per element, so square
// tiles are copied instead, (slab, band of output lines) pairs in parallel.
// `column` is the output dimension that is the input's minor one.
template <typename E>
void BlockedTranspose(const E* in, E* out, const std::vector<int64_t>& out_dims,
                      const std::vector<int64_t>& in_strides, size_t column, const IntraOpThreadPool* pool) {
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
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      int64_t slab = task / bands;
      const int64_t r0 = task % bands * kTransposeTile;
      const int64_t r1 = std::min(rows, r0 + kTransposeTile);
      int64_t in_offset = 0, out_offset = 0;
      for (auto it = others.rbegin(); it != others.rend(); ++it) {
        const int64_t index = slab % out_dims[*it];
        slab /= out_dims[*it];
        in_offset += index * in_strides[*it];
        out_offset += index * out_strides[*it];
      }
      for (int64_t c0 = 0; c0 < columns; c0 += kTransposeTile) {
        const int64_t c1 = std::min(columns, c0 + kTransposeTile);
        for (int64_t c = c0; c < c1; ++c) {
          E* line = out + out_offset + c * column_stride;
          const E* source = in + in_offset + c;
          for (int64_t r = r0; r < r1; ++r) line[r] = source[r * row_stride];
        }
      }
    }
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
        return BlockedTranspose(in, out, out_dims, in_strides, d, pool);
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
  for (int64_t d : permutation) {
    out_dims_.push_back(input_shape.dimensions(d));
    in_strides_.push_back(strides[static_cast<size_t>(d)]);
  }
}

Status TransposeThunk::Run(ExecutionContext& context) const {
  const void* in = context.slots[inputs_[0]];
  void* out = context.slots[outputs_[0]];
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
