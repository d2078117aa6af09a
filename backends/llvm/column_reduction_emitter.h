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

// How many trailing output dimensions of column reduction `reduce` a CPU
// kernel iterates as one: those after the last reduced input dimension lie
// one after another in the input as in the output (all of f32[256,256,256]
// summed over axis 0), so a block of outputs may span several rows of an
// innermost dimension shorter than a block, and each input row is read in
// stretches as long as a block (256 outputs, 1 KiB at a time, were 35%
// slower than 1024 on this AMD EPYC). 1 (the innermost alone) where an
// innermost row fills half a block or more, or no other dimension follows
// the reduced ones.
int64_t ColumnReductionTailDims(const Instruction& reduce);

// Computes outputs [begin, end) (at most kMaxColumnBlock) along the last
// dimension of `output_dims`, at leading output index `row_index`, of
// `reduce` (the kernel's root) into `output`, a dense row-major array of
// `output_dims`: the reduce's output dimensions with the last `tail_dims`
// taken as one (ColumnReductionTailDims). Where `tail_dims` is more than 1,
// [begin, end) must be whole rows of the innermost output dimension.
Status EmitColumnReduction(llvm::IRBuilder<>& b, ElementalEmitter& emitter, const Instruction& reduce,
                           const IrIndex& row_index, llvm::Value* begin, llvm::Value* end,
                           llvm::Value* output, const std::vector<int64_t>& output_dims,
                           int64_t tail_dims = 1);

}  // namespace kiln::llvm_ir
