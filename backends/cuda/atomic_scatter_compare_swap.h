// The atomic scatter's combine for combiners with no single atomic
// instruction on the GPU (atomic_scatter_emitter.h): a compare-and-swap
// loop, as XLA's GPU backend and PyTorch's CUDA scatters emit for them.
// The thread reads the word that holds the output element, combines the
// element with its update, and swaps the result in only if the word still
// holds what it read; else it combines again with what the word now
// holds. An element narrower than 32 bits is swapped in the aligned
// 32-bit word around it, its neighbours' bits kept as read, so threads
// updating the neighbours at the same time lose nothing. That word can
// reach up to 3 bytes past either end of a buffer that is not 4-byte
// aligned in size or address; they lie in the same page (the GPU maps
// whole pages), and the swap writes them back as it read them.
//
// One combine step is the interpreter's step: f16 and bf16 compute in f32
// and round once; float minimum and maximum return a NaN operand (the
// combiner's first if both are) and otherwise the combiner's second
// operand on a tie, so +0 and -0 order as the interpreter orders them.
// Duplicates combine in the order the threads get there, so where the
// step is not associative (f16/bf16 sums' rounding, min/max of +0 against
// -0, NaN payloads) the result can differ from the interpreter's update
// order as XLA's GPU scatter's does.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include "backends/llvm/elemental_emitter.h"
#include "core/ir.h"
#include "core/status.h"

namespace kiln::cuda {

// Whether a scatter's combiner that applies `opcode` to its two
// parameters combines elements of `type` by compare-and-swap: minimum and
// maximum of f32/f64; add, minimum and maximum of f16/bf16; add,
// multiply, minimum, maximum, and, or, xor of 8- and 16-bit integers; and
// the multiply of 32- and 64-bit integers (exact in any order). Float
// products stay serial: the order of duplicates decides where they
// overflow or underflow, not only their rounding.
bool CombinesByCompareSwap(Opcode opcode, ElementType type);

// Combines `update` (of the compute type of `type`) into the output
// element at `address` by `combiner` (a scatter's, CombinesByCompareSwap
// holds), with relaxed atomics; the builder is left after the loop.
Status EmitCompareSwapCombine(llvm::IRBuilder<>& b, llvm_ir::ElementalEmitter& emitter,
                              const Computation& combiner, ElementType type, llvm::Value* address,
                              llvm::Value* update);

}  // namespace kiln::cuda
