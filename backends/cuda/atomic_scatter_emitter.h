// A scatter whose combiner is one commutative, associative op with an
// atomic instruction on the GPU runs in parallel, as XLA's GPU backend
// runs it, instead of on one thread that walks every update (the shared
// serial kernel, backends/llvm/scatter_emitter.h). One entry
// `name(ptr param0..paramN-1, ptr out, i64 extent, i64 mode)`, launched
// twice on the execution's stream:
//   mode 0 (copy)    a thread per output element stores the operand's
//                    element there;
//   mode 1 (update)  a thread per update element whose window fits (the
//                    serial kernel's rule, shared code) combines it into
//                    the output element it lands on with an atomic
//                    read-modify-write.
// Duplicate indices then combine in whatever order the threads get there:
// integer results are exact (the ops are associative and commutative);
// float sums differ from the interpreter's update order by rounding only,
// as XLA's GPU scatter and PyTorch's CUDA index_add/scatter_add do.
// Other scatters (assignment, multiply, min/max of floats, f16, bf16,
// 8/16-bit integers, several operands) keep the serial kernel, whose
// order of duplicates is the interpreter's.
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
// an add of f32 or f64 (NVPTX's atom.add.f32/.f64), or an add, minimum,
// maximum, and, or, xor of 32- or 64-bit integers (signed or unsigned).
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
