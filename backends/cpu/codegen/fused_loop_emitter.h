// Emits a while loop compiled whole (fused_loop.h: the request, the
// function's ABI and its table of buffer pointers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include <llvm/IR/Module.h>

#include "backends/cpu/codegen/fused_loop.h"
#include "core/status.h"

namespace kiln::cpu {

// One kernel the loop calls: already in the module (kernel_compiler.h's
// ABI), its whole parallel extent, and how many buffers it takes.
struct FusedLoopKernel {
  llvm::Function* function = nullptr;
  int64_t extent = 1;
  size_t buffers = 0;
};

// Adds `i64 name(ptr trip_tables, i64 kind, i64 max_trips, ptr trips)`
// (FusedLoopFunction) to `module`, calling `condition_kernels`, then the
// predicate test, then `body_kernels` per trip. Each kernel is marked to
// be inlined, so that its extent is a constant there and its short loops
// unroll; it keeps its own symbol for its other callers.
Status EmitFusedLoop(llvm::Module& module, const std::string& name,
                     std::span<const FusedLoopKernel> condition_kernels,
                     std::span<const FusedLoopKernel> body_kernels);

}  // namespace kiln::cpu
