// What the CUDA backend can run as a kernel of one instruction: the LLVM
// emitters' table (backends/llvm/emittable.h) with a dynamic-update-slice
// root, plus the kernels only this backend has (rng, rng-bit-generator,
// sort, topk). The fusion pass and UnsupportedOps read it; it answers as
// CheckPtxEmittable on the instruction's own computation would.
#pragma once

#include "core/compiler/emittable_table.h"

namespace kiln::cuda {

// Bytes of kernel parameters every CUDA device takes, and what a driver of
// CUDA 12.1 or later takes on compute capability 7.0 or later (from PTX
// ISA 8.1, which ptxas requires for parameters past 4352 bytes).
inline constexpr int64_t kPortableKernelParameterBytes = 4096;
inline constexpr int64_t kLargeKernelParameterBytes = 32764;

// The parameter space of a device: kLargeKernelParameterBytes when
// `driver_version` (cuDriverGetVersion's, e.g. 12010) is 12010 or later and
// `compute_capability` (major * 10 + minor) 70 or later, else
// kPortableKernelParameterBytes.
int64_t KernelParameterBytes(int driver_version, int compute_capability);

// The buffers a kernel may bind in `parameter_bytes` of parameters: a
// pointer each, after the i64 extent and at most one more i64 (an rng
// kernel's key), one kept for a kernel's scratch (sort, topk): 509 in 4 KiB.
int64_t MaxKernelBuffers(int64_t parameter_bytes);

// The table for kernels of `parameter_bytes` of parameters (either of the
// two constants above; anything else is the portable one).
const compiler::EmittableTable& PtxEmittableTable(int64_t parameter_bytes = kPortableKernelParameterBytes);

// OK when a kernel of `kernel` (its parameters and result arrays, one
// pointer each) fits `parameter_bytes` of kernel parameters:
// MaxKernelBuffers of them. Else UNIMPLEMENTED naming the root and the
// counts. Fusion keeps within it; this refuses an instruction that alone
// binds more (a concatenate of 600 arrays in 4 KiB) before its PTX would
// fail to load.
Status CheckPtxKernelBuffers(const Computation& kernel,
                             int64_t parameter_bytes = kPortableKernelParameterBytes);

}  // namespace kiln::cuda
