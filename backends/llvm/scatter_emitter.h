// Kernels rooted at scatter or select-and-scatter. These are not elemental:
// each update (or source element) writes one output element chosen at run
// time, and with duplicate indices the order of the writes matters for a
// non-commutative combiner. So the kernel runs serially (parallel extent 1):
// it first fills its outputs (scatter: a copy of the operands;
// select-and-scatter: the init value), then walks the updates in row-major
// order, combining each into its target with the nested computation inlined.
#pragma once

#include <functional>
#include <vector>

#include <llvm/IR/IRBuilder.h>

#include "backends/llvm/elemental_emitter.h"
#include "core/ir.h"
#include "core/status.h"

namespace kiln::llvm_ir {

bool IsScatterLike(const Instruction& instruction);

// Emits the whole computation of `root` at the builder's insertion point;
// `outputs` are the output buffers (one per array leaf of `root`).
Status EmitScatterLike(llvm::IRBuilder<>& b, ElementalEmitter& emitter, const Instruction& root,
                       const std::vector<llvm::Value*>& outputs);

// The pieces of a scatter (not select-and-scatter) of `outputs.size()`
// operands, for a target that runs them in parallel (the CUDA backend's
// atomic scatter, backends/cuda/atomic_scatter_emitter.h):
//
// Stores every operand's element at `index` (of the operands' shape;
// `linear` its row-major number) into the same element of `outputs`.
Status EmitScatterOperandCopy(llvm::IRBuilder<>& b, ElementalEmitter& emitter, const Instruction& scatter,
                              const std::vector<llvm::Value*>& outputs, const IrIndex& index,
                              llvm::Value* linear);

// Combines `updates` (one value per operand) into the output elements of
// row-major number `target_linear`.
using ScatterCombine = std::function<Status(llvm::Value* target_linear, const IrValues& updates)>;

// The update element at `update_index`: when its whole window fits in the
// operand (XLA's rule: else it is skipped), `combine` with the output
// element it lands on and the updates' values there.
Status EmitScatterUpdate(llvm::IRBuilder<>& b, ElementalEmitter& emitter, const Instruction& scatter,
                         const IrIndex& update_index, const ScatterCombine& combine);

}  // namespace kiln::llvm_ir
