// Sort and topk on the GPU as a bitonic network (core/lowering/bitonic_sort.h)
// over the element numbers of each row (the elements along the sort
// dimension for one position of the others), in a scratch buffer of
// rows x padded length i32. A pair of element numbers x < y is ordered by
// one comparator call: y goes first only when comp(values at y, values at
// x) holds, so ties keep the element order and every sort is stable
// (`is_stable` holds whatever the attribute says). Padded element numbers
// (>= the row's length) go after every real one and never load values.
// Last, every operand is gathered through the sorted element numbers (topk:
// the first k values and their indices).
//
// The kernel is one entry whose first i64 argument picks what a launch does
// (BitonicLaunchMode, core/lowering/bitonic_sort.h); the runtime launches
// it as the schedule says (PtxKernel::launches, BitonicSortLaunches), all
// on one stream:
//   kSortTiles          a block of tile / 2 threads sorts one tile of a row
//                       in shared memory, writing the initial element numbers
//   kMergeAcrossTiles   one compare-exchange per thread at distance `stride`
//                       of merge size `block`, over global memory
//   kMergeWithinTiles   a block loads one tile, runs the distances tile / 2
//                       .. 1 of merge size `block`, writes it back
//   kFinish             one thread per output element: the gather (sort) or
//                       the take of the first k (topk)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/cuda/ptx_compiler.h"
#include "core/ir.h"
#include "core/lowering/bitonic_sort.h"
#include "core/status.h"

namespace llvm {
class Module;
}  // namespace llvm

namespace kiln::cuda {

// Element numbers one block sorts in shared memory (tile / 2 threads, one
// compare-exchange each per step): rows up to this long take one launch
// before the finish.
inline constexpr int64_t kSortTile = 2048;
// Threads per block of the launches over global memory.
inline constexpr int kSortGlobalThreads = 256;

// OK when `sort` (operands as arrays of one shape, a scalar comparator of
// 2N parameters returning pred) can be emitted; UNIMPLEMENTED otherwise.
Status CheckSortEmittable(const Instruction& sort);

// Bytes of scratch the kernel needs (sort or topk): the element numbers of
// every row, padded to a power of two, as i32.
int64_t SortScratchBytes(const Instruction& sort);

// Adds the GPU entry `name(ptr op0..opN-1, ptr out0..outN-1, ptr scratch,
// i64 mode, i64 block, i64 stride)` for `sort`, whose operands are its
// computation's parameters. Returns the kernel with its launches. `tile`
// (a power of two, 2 .. 2048) is a parameter for tests that run the
// kernel's IR on the host with small blocks.
StatusOr<PtxKernel> EmitSortKernel(llvm::Module& module, const Instruction& sort, const std::string& name,
                                   int64_t tile = kSortTile);

// topk over the last dimension the same way: the row's element numbers
// sorted by the total order of compare's TOTALORDER (largest or smallest
// first; ties by index), then the first k. The entry is `name(ptr operand,
// ptr values, ptr indices, ptr scratch, i64 mode, i64 block, i64 stride)`.
Status CheckTopKEmittable(const Instruction& top_k);
StatusOr<PtxKernel> EmitTopKKernel(llvm::Module& module, const Instruction& top_k, const std::string& name,
                                   int64_t tile = kSortTile);

}  // namespace kiln::cuda
