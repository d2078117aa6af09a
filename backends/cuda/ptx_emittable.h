// What the CUDA backend can run as a kernel of one instruction: the LLVM
// emitters' table (backends/llvm/emittable.h) with a dynamic-update-slice
// root, plus the kernels only this backend has (rng, rng-bit-generator,
// sort, topk). The fusion pass and UnsupportedOps read it; it answers as
// CheckPtxEmittable on the instruction's own computation would.
#pragma once

#include "core/compiler/emittable_table.h"

namespace kiln::cuda {

const compiler::EmittableTable& PtxEmittableTable();

// OK when a kernel of `kernel` (its parameters and result arrays, one
// pointer each) fits the kernel-parameter space every CUDA device has:
// PtxEmittableTable().max_kernel_buffers() of them. Else UNIMPLEMENTED
// naming the root and the counts. Fusion keeps within it; this refuses an
// instruction that alone binds more (a concatenate of 600 arrays) before
// its PTX would fail to load.
Status CheckPtxKernelBuffers(const Computation& kernel);

}  // namespace kiln::cuda
