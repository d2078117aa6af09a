// A scatter whose combiner is one commutative op that a GPU thread can
// apply atomically runs in parallel, as XLA's GPU backend
// runs it, instead of on one thread that walks every update (the shared
// serial kernel, backends/llvm/scatter_emitter.h). One entry
// `name(ptr param0..paramN-1, ptr out, i64 extent, i64 mode)`, launched
// twice on the execution's stream:
//   mode 0 (copy)    a thread per output element stores the operand's
//                    element there;
//   mode 1 (update)  a thread per update element whose window fits (the
//                    serial kernel's rule, shared code) combines it into
//                    the output element it lands on with an atomic
//                    read-modify-write, or where the op has no atomic
//                    instruction a compare-and-swap loop
//                    (atomic_scatter_compare_swap.h).
// Duplicate indices then combine in whatever order the threads get there:
// integer results are exact (the ops are associative and commutative);
// float sums (f16/bf16 too) differ from the interpreter's update order by
// rounding only, as XLA's GPU scatter and PyTorch's CUDA
// index_add/scatter_add do; float minimum and maximum only in which of +0
// and -0, or of two NaNs, they keep.
// Other scatters (assignment, float multiply, several operands) keep the
// serial kernel, whose order of duplicates is the interpreter's.
#pragma once

#include <cstdint>
#include <string>

#include "backends/cuda/ptx_compiler.h"
#include "core/ir.h"
#include "core/status.h"

namespace llvm {
class Module;
}  // namespace llvm

namespace kiln::cuda {

// Whether `kernel` (a kernel computation) runs as the atomic scatter: its
// root is a scatter of one array whose combiner is, of its two parameters,
// an add of f32 or f64 (NVPTX's atom.add.f32/.f64), an add, minimum,
// maximum, and, or, xor of 32- or 64-bit integers (signed or unsigned;
// atom.add/min/max/and/or/xor), or an op CombinesByCompareSwap takes.
bool RunsAsAtomicScatter(const Computation& kernel);

// The launches' `mode` parameter (after the extent).
inline constexpr int64_t kAtomicScatterCopyMode = 0;
inline constexpr int64_t kAtomicScatterUpdateMode = 1;

// Adds the entry `name` for `kernel` (RunsAsAtomicScatter holds), whose
// parameters are its buffers, and `name.iteration`, the serial kernel of
// the CPU ABI, for a loop that runs whole on the device (whole_loop.h; a
// kernel it does not call is dropped). Returns the kernel with its two
// launches: the copy over the output's elements, then the update over the
// updates' elements, kThreadsPerBlock threads a block.
StatusOr<PtxKernel> EmitAtomicScatterKernel(llvm::Module& module, const Computation& kernel,
                                            const std::string& name);

}  // namespace kiln::cuda
