// Emits one kernel function with the ABI of kernel_compiler.h: a loop nest
// over the computation's output, split into a parallel extent of
// (outer rows x blocks of the innermost dimension), whose innermost loop is a
// simple counted loop over contiguous elements.
#pragma once

#include <cstdint>
#include <string>

#include <llvm/IR/Module.h>

#include "backends/llvm/elemental_emitter.h"
#include "core/ir.h"
#include "core/status.h"

namespace kiln::llvm_ir {

struct KernelLayout {
  int64_t parallel_extent = 1;
  int64_t bytes_per_iteration = 0;
};

// Elements of work one parallel iteration covers by default: enough to
// amortise a CPU thread's per-iteration overhead, few enough to balance
// threads. A GPU asks for 1, one output element per thread.
inline constexpr int64_t kCpuWorkPerIteration = 16384;

// Adds `void name(ptr buffers, i64 begin, i64 end)` to `module`, with what
// differs per target from `target` (target_hooks.h). With
// `cooperative` (a GPU; its `lane` is ignored), kernels whose outputs read
// row reductions, or whose output is one, give each row (or output) a group
// of `cooperative->lanes` iterations that reduce it together
// (elemental_emitter.h); consecutive iterations form a group, so a group is
// a warp when the launch maps iterations to threads in order.
StatusOr<KernelLayout> EmitKernel(llvm::Module& module, const Computation& computation,
                                  const std::string& name, const TargetHooks& target,
                                  int64_t work_per_iteration = kCpuWorkPerIteration,
                                  const CooperativeRows* cooperative = nullptr);

}  // namespace kiln::llvm_ir
