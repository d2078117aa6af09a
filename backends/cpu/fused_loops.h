// The lowering's last step on the CPU: while loops whose condition and body
// are a few small kernels are compiled whole (codegen/fused_loop.h), so that
// a trip costs a few instructions instead of a kernel call per step; every
// other loop runs as its thunks say.
#pragma once

#include "backends/cpu/codegen/kernel_compiler.h"
#include "backends/cpu/program.h"

namespace kiln::cpu {

// Finds the loops of `program` worth compiling whole (every leaf computed
// in place or passed through; every step of the condition and the body a
// kernel over at most kMaxFusedLoopKernelBytes; at most kMaxFusedLoopKernels
// kernels), compiles them in one call of `compiler` and gives each its
// function. Counts them in statistics.fused_loops.
Status CompileFusedLoops(CompiledProgram& program, KernelCompiler& compiler, const KernelDump& dump = {});

// Kernels this small run inline, one task each (CpuKernelGrid), where the
// loop's overhead is most of a trip; larger ones, or many, gain little and
// would cost compile time.
inline constexpr int64_t kMaxFusedLoopKernelBytes = 64 * 1024;
inline constexpr size_t kMaxFusedLoopKernels = 16;

}  // namespace kiln::cpu
