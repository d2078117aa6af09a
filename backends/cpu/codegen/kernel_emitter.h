// Emits one kernel function with the ABI of kernel_compiler.h: a loop nest
// over the computation's output, split into a parallel extent of
// (outer rows x blocks of the innermost dimension), whose innermost loop is a
// simple counted loop over contiguous elements.
#pragma once

#include <cstdint>
#include <string>

#include <llvm/IR/Module.h>

#include "core/ir.h"
#include "core/status.h"

namespace kiln::cpu::codegen {

struct KernelLayout {
  int64_t parallel_extent = 1;
  int64_t bytes_per_iteration = 0;
};

// Elements of work one parallel iteration covers by default: enough to
// amortise a CPU thread's per-iteration overhead, few enough to balance
// threads. A GPU asks for 1, one output element per thread.
inline constexpr int64_t kCpuWorkPerIteration = 16384;

// Adds `void name(ptr buffers, i64 begin, i64 end)` to `module`.
StatusOr<KernelLayout> EmitKernel(llvm::Module& module, const Computation& computation,
                                  const std::string& name, int64_t work_per_iteration = kCpuWorkPerIteration);

}  // namespace kiln::cpu::codegen
