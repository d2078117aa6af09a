// What the CUDA backend can run as a kernel of one instruction: the LLVM
// emitters' table (backends/llvm/emittable.h) with a dynamic-update-slice
// root, plus the kernels only this backend has (rng, rng-bit-generator,
// sort, topk). The fusion pass and UnsupportedOps read it; it answers as
// CheckPtxEmittable on the instruction's own computation would.
#pragma once

#include "core/compiler/emittable_table.h"

namespace kiln::cuda {

const compiler::EmittableTable& PtxEmittableTable();

}  // namespace kiln::cuda
