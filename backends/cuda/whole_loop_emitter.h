// Emits a loop kernel (whole_loop.h: its ABI and what a trip runs) into the
// PTX compiler's module, where the program's kernels are already emitted.
#pragma once

#include <span>

#include <llvm/IR/Module.h>

#include "backends/cuda/ptx_compiler.h"
#include "backends/cuda/whole_loop.h"
#include "core/status.h"

namespace kiln::cuda {

// Adds `loop`'s kernel to `module`. Each launch step calls the elemental
// iteration function ("NAME.iteration", `void (ptr buffers, i64 begin,
// i64 end)`) that CompileToPtx left for kernels[step.kernel], which is then
// inlined. False, adding nothing, when a step's kernel has no such function
// (a kernel with an entry of its own) or more than kWholeLoopMaxExtent
// parallel iterations: the loop then runs from the host.
StatusOr<bool> EmitWholeLoopKernel(llvm::Module& module, const WholeLoopKernel& loop,
                                   std::span<const PtxKernel> kernels);

}  // namespace kiln::cuda
