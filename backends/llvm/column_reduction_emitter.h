// Column reductions: a reduce over leading dimensions that keeps the input's
// last dimension (a bias gradient: f32[256,512] summed over the batch). Read
// element by element from the output, each value would come from a strided
// column, which neither vectorises nor uses whole cache lines. Instead a block
// of outputs is accumulated side by side: for each reduced position, one
// contiguous stretch of the input row updates the whole block, so the inner
// loop vectorises. Each output still combines its inputs in the same order.
#pragma once

#include <cstdint>
#include <vector>

#include <llvm/IR/IRBuilder.h>

#include "backends/llvm/elemental_emitter.h"
#include "core/ir.h"
#include "core/status.h"

namespace kiln::llvm_ir {

// Widest block of outputs accumulated at once (kept on the stack).
constexpr int64_t kMaxColumnBlock = 1024;

// A single-output reduce of an array whose last input dimension is kept.
bool IsColumnReduction(const Instruction& instruction);

// Computes outputs [begin, end) (at most kMaxColumnBlock) along the last
// output dimension, at leading output index `row_index`, of `reduce` (the
// kernel's root) into `output`, a dense row-major array of `output_dims`.
Status EmitColumnReduction(llvm::IRBuilder<>& b, ElementalEmitter& emitter, const Instruction& reduce,
                           const IrIndex& row_index, llvm::Value* begin, llvm::Value* end,
                           llvm::Value* output, const std::vector<int64_t>& output_dims);

}  // namespace kiln::llvm_ir
