// Thunks that only move bytes: a transposing copy (to give the dot thunk the
// operand order it needs) and dynamic-update-slice, which runs in place when
// buffer assignment gave its result the operand's buffer.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/cpu/thunk.h"
#include "core/ir.h"
#include "core/shape.h"

namespace kiln::cpu {

// out[i_0..i_n] = in[i_perm...]: output dimension d is input dimension
// permutation[d] (like the transpose op). When the input's minor dimension
// moves, tiles are copied (in parallel) so that both sides are read and
// written a cache line at a time; dimensions of one are dropped and
// dimensions adjacent on both sides merged first. Tiles move as register
// blocks (16 x 16 bytes in SSE2, 16 x 16 2-byte elements in AVX2, 16 x 16
// 4-byte and 8 x 8 8-byte elements in AVX-512, else 8 x 8 4-byte ones in
// AVX), and a transpose past the caches takes tall tiles whose next input
// lines are prefetched (see data_movement_thunks.cc).
class TransposeThunk : public Thunk {
 public:
  TransposeThunk(int input, int output, const Shape& input_shape, std::vector<int64_t> permutation);
  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return "transpose"; }

 private:
  std::vector<int64_t> out_dims_;
  std::vector<int64_t> in_strides_;  // input stride of each output dimension, in elements
  int64_t element_bytes_;
  int64_t element_count_;
};

// The transpose that `fusion` is, when its computation is nothing but one
// transpose of its parameter (a transpose that fused with nothing), else null.
const Instruction* LoneTranspose(const Instruction& fusion);

class DynamicUpdateSliceThunk : public Thunk {
 public:
  // inputs: operand, update, then one scalar start index per dimension.
  DynamicUpdateSliceThunk(std::vector<int> inputs, int output, const Shape& operand, const Shape& update,
                          std::vector<ElementType> index_types);
  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return "dynamic-update-slice"; }

 private:
  std::vector<int64_t> operand_dims_;
  std::vector<int64_t> update_dims_;
  std::vector<ElementType> index_types_;
  int64_t element_bytes_;
};

// Reads a scalar integer of `type` (any integer or pred) as int64.
int64_t ReadIndex(const void* data, ElementType type);

}  // namespace kiln::cpu
