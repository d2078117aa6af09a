// Instruction fusion: groups producers into their consumers and replaces each
// group by one `fusion` instruction whose called computation a backend turns
// into one kernel.
//   kLoop:  elementwise ops, broadcasts, reshapes, transposes, slices,
//           converts, iota, pad, concatenate, reverse, dynamic-slice,
//           select, clamp, compare and small constants, computed elementally
//           from the group's inputs;
//   kInput: a reduce with such producers fused into its operands.
// Row reductions (a reduce over only the last dimension) also fuse into a
// consumer that reads them through row broadcasts and walks the same rows
// (softmax: max, then sum of exp(x - max), then exp(x - max) / sum; layer
// norm: mean, variance, normalise): the kernel computes each row's
// reductions once, before the loop over the row's elements, so the whole
// chain is one kernel and one pass over memory.
// Groups are grown from consumers towards producers. A producer joins a
// group when all its users are in that group; cheap producers (broadcast,
// iota, constants, convert) are duplicated into every group that uses them,
// and an elementwise producer whose few users all fuse is recomputed in each
// of them rather than written to memory (softmax: exp(x - max) feeds both
// the sum and the output). Never fused: dot, convolution, control flow,
// sort, scatter, gather (unless fuse_gathers), custom-call, rng, host transfers, and anything the
// backend's predicate refuses. Only the entry and the computations reached
// through while/conditional/call are fused; reducers and comparators are
// left alone. A fused computation has at most max_fusion_size instructions
// and max_fusion_inputs parameters, binds at most max_kernel_buffers
// arrays (parameters and results), and evaluates none of its values at more
// than max_emissions_per_value indices per element (a value read through
// index-changing ops along several paths is emitted once per path), which
// bounds a backend's work per kernel.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>

#include "core/pass.h"

namespace kiln {

using FusionPredicate = std::function<bool(const Instruction&)>;

// The generic rule: may this instruction be part of a loop fusion?
bool IsLoopFusible(const Instruction& instruction);
// Loop-fusible, or a reduce (the root of an input fusion).
bool IsFusibleByDefault(const Instruction& instruction);
// A reduce of array operands over exactly the last dimension of a rank >= 2
// input: each output element is one row's reduction.
bool IsRowReduction(const Instruction& instruction);
// A broadcast of a row reduction's result along a new last dimension:
// operand dimensions map to the leading dimensions of the result.
bool IsRowBroadcast(const Instruction& instruction);

struct FusionOptions {
  // The backend's own rule; an instruction is fused only when both the
  // generic rule and this one accept it. Empty means the generic rule alone.
  FusionPredicate can_fuse;
  // Constants up to this many elements are fused (duplicated) into users.
  int64_t max_fused_constant_elements = 1024;
  // Upper bound on the instructions of one fused computation.
  int64_t max_fusion_size = 256;
  // Upper bound on the values one fused computation reads (its parameters;
  // a constant, iota, broadcast or convert it may copy in is not counted).
  // LLVM's loop vectoriser compares every pair of a loop's memory accesses,
  // each with an alias scope per parameter: a CPU kernel reading 248 arrays
  // took 0.6 s to optimise.
  int64_t max_fusion_inputs = 64;
  // Upper bound on the arrays one fused kernel binds: its parameters, every
  // one counted (the copies above too), plus its result arrays. Unlike
  // max_fusion_inputs this is a device's hard limit (a Vulkan device's
  // storage-buffer bindings per dispatch, CUDA's kernel-parameter space:
  // EmittableTable::max_kernel_buffers), so no fusion ever exceeds it; an
  // instruction that alone exceeds it is never fused.
  int64_t max_kernel_buffers = std::numeric_limits<int64_t>::max();
  // Upper bound on the number of different indices at which a kernel
  // evaluates one fused value per output element. A value reached through
  // index-changing ops (pad, slice, concatenate, reshape, ...) along several
  // paths is emitted once per path, and a ladder of such fan-outs doubles at
  // each rung: the gradient of a cumulative product over 512 elements fused
  // nine rungs of pad/add pairs into one kernel that evaluated its lowest
  // values 512 times per element (13.9 s in LLVM). A producer beyond the
  // bound is written to memory instead; 16 still fuses a 4x4 stencil of
  // slices.
  int64_t max_emissions_per_value = 16;
  // Whether a row reduction joins the kernel of its consumers (softmax's
  // max and sum inside its elementwise kernel). Only for a backend whose
  // kernels compute such a reduction once per row (the CPU's row cache, the
  // CUDA backend's warp per row); one that evaluates every output element on
  // its own would redo the whole row's reduction for each element.
  bool fuse_row_reductions = true;
  // Whether a gather joins kernels as the loop-fusible ops do: as the root
  // of its index producers' kernel, or as a producer of its consumers'
  // (all of them in one group; a gather is never recomputed per user).
  // JAX's take surrounds the gather with an index normalisation and a
  // bounds check, and an embedding lookup is often summed at once: fused,
  // the gathered array is never written and read back. Only for a backend
  // whose kernels compute a gather elementally at any index and whose
  // emittable table says so (EmittableTable::fuses_gathers).
  bool fuse_gathers = false;
};

class InstructionFusion : public Pass {
 public:
  explicit InstructionFusion(FusionOptions options = {}) : options_(std::move(options)) {}
  std::string_view name() const override { return "fusion"; }
  StatusOr<bool> Run(Module& module) override;

 private:
  FusionOptions options_;
};

}  // namespace kiln
