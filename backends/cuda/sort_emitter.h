// Sort on the GPU: one thread per row (the elements along the sort
// dimension for one position of the others), which merge-sorts the row's
// element numbers bottom-up in a scratch buffer with the comparator
// inlined, then gathers every operand in that order. Merge sort is stable,
// so `is_stable` holds whatever the attribute says. Rows sort in parallel;
// a single long row runs on one thread (a block-wide sort is the next step).
#pragma once

#include <cstdint>
#include <string>

#include "core/ir.h"
#include "core/status.h"

namespace llvm {
class Module;
}  // namespace llvm

namespace kiln::cuda {

// OK when `sort` (operands as arrays of one shape, a scalar comparator of
// 2N parameters returning pred) can be emitted; UNIMPLEMENTED otherwise.
Status CheckSortEmittable(const Instruction& sort);

// Bytes of scratch the kernel needs (sort or topk): two element-number
// arrays per row.
int64_t SortScratchBytes(const Instruction& sort);

// Adds the GPU entry `name(ptr op0..opN-1, ptr out0..outN-1, ptr scratch,
// i64 rows)` for `sort`, whose operands are its computation's parameters.
// Returns the number of threads to launch (rows).
StatusOr<int64_t> EmitSortKernel(llvm::Module& module, const Instruction& sort, const std::string& name);

// topk over the last dimension the same way: the row's element numbers
// sorted by the total order of compare's TOTALORDER (largest or smallest
// first; ties by index, which the stable sort keeps), then the first k.
// The entry is `name(ptr operand, ptr values, ptr indices, ptr scratch,
// i64 rows)`.
Status CheckTopKEmittable(const Instruction& top_k);
StatusOr<int64_t> EmitTopKKernel(llvm::Module& module, const Instruction& top_k, const std::string& name);

}  // namespace kiln::cuda
