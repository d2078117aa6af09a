// The lowering's loops compiled whole on the CPU: while loops whose
// condition and body are a few small kernels are requested from the code
// generator with the program's kernels, in the same Compile call
// (codegen/fused_loop.h), so that a trip costs a few instructions instead
// of a kernel call per step; every other loop runs as its thunks say.
#pragma once

#include <vector>

#include "backends/cpu/codegen/kernel_compiler.h"
#include "backends/cpu/program.h"

namespace kiln::cpu {

class WhileThunk;

// The loops to compile whole, and the thunk that runs each.
struct FusedLoopPlan {
  std::vector<FusedLoopRequest> requests;  // over program.kernel_descriptions, by index
  std::vector<WhileThunk*> loops;          // loops[i] runs requests[i]
};

// Finds the loops of `program` worth compiling whole (every leaf computed
// in place or passed through; every step of the condition and the body a
// kernel over at most kMaxFusedLoopKernelBytes; at most kMaxFusedLoopKernels
// kernels). Run before the kernels are compiled.
FusedLoopPlan PlanFusedLoops(CompiledProgram& program);

// Gives each planned loop its function from `code`, what the Compile call
// given plan.requests returned; counts them in statistics.fused_loops.
Status InstallFusedLoops(const FusedLoopPlan& plan, const CompiledKernels& code, CompiledProgram& program);

// Kernels this small run inline, one task each (CpuKernelGrid), where the
// loop's overhead is most of a trip; larger ones, or many, gain little and
// would cost compile time.
inline constexpr int64_t kMaxFusedLoopKernelBytes = 64 * 1024;
inline constexpr size_t kMaxFusedLoopKernels = 16;

}  // namespace kiln::cpu
