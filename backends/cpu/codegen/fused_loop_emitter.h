// Emits a while loop compiled whole (fused_loop.h: the request, the
// function's ABI and its table of buffer pointers).
#pragma once

#include <llvm/IR/Module.h>

#include "backends/cpu/codegen/fused_loop.h"
#include "backends/llvm/target_hooks.h"
#include "core/status.h"

namespace kiln::cpu {

// Adds `i64 name(ptr trip_tables, i64 kind, i64 max_trips, ptr trips)`
// (FusedLoopFunction) to `module`, with the loop's kernels emitted again as
// internal functions that LLVM inlines into it, so each kernel's extent is
// a constant there and its short loops unroll.
Status EmitFusedLoop(llvm::Module& module, const FusedLoopRequest& request,
                     const llvm_ir::TargetHooks& target);

}  // namespace kiln::cpu
