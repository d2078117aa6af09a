// The CUDA backend's convolution kernel: an implicit GEMM
// (convolution_gemm_plan.h). Block (group, m tile, n tile) computes a
// kConvolutionTileM x kConvolutionTileN tile of its group's C: per step of
// kConvolutionTileK along K its kConvolutionThreads threads stage that slice
// of A (the input read through the window arithmetic, zero where the window
// falls in padding or between base-dilated elements) and of B (the filter)
// in shared memory as f32, meet at a barrier, and each adds a
// kConvolutionThreadM x kConvolutionThreadN register block of products
// (f32 fused multiply-adds); after the last step each thread writes its
// block's outputs that lie within M and N, rounded once to the output
// type. Thread (ty, tx) of the block owns rows ty + 16 i and columns
// tx + 16 j, so a warp's reads of the B tile are consecutive words and of
// the A tile one or two broadcast words. A warp stages A along k where the
// input's features are contiguous (NHWC-like: its reads are runs of
// neighbouring features and window positions), else along m (NCHW-like:
// runs of neighbouring output positions), and B along k where the filter
// is contiguous along k (else along n). The sum's order differs from the
// elemental path's.
#pragma once

#include <string>

#include "backends/cuda/convolution_gemm_plan.h"
#include "backends/cuda/ptx_compiler.h"
#include "core/ir.h"
#include "core/status.h"

namespace llvm {
class Module;
}  // namespace llvm

namespace kiln::cuda {

// The GEMM plan of a kernel computation whose root is a convolution of two
// of its parameters (nothing fused into it: the fusion pass never fuses a
// convolution); UNIMPLEMENTED, the kernel then taking the elemental path,
// when the computation is not that or PlanConvolutionGemm refuses it.
StatusOr<ConvolutionGemmPlan> PlanConvolutionGemmKernel(const Computation& kernel);

// Adds the entry `name(ptr p0..pP-1, ptr out, i64 extent)` for `kernel`
// (planned by PlanConvolutionGemmKernel as `plan`), P being its parameter
// count; it runs as plan.blocks() blocks of kConvolutionThreads threads
// (parallel_extent = blocks * kConvolutionThreads).
StatusOr<PtxKernel> EmitConvolutionGemmKernel(llvm::Module& module, const Computation& kernel,
                                              const ConvolutionGemmPlan& plan, const std::string& name);

}  // namespace kiln::cuda
