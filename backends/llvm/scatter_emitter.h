// Kernels rooted at scatter or select-and-scatter. These are not elemental:
// each update (or source element) writes one output element chosen at run
// time, and with duplicate indices the order of the writes matters for a
// non-commutative combiner. So the kernel runs serially (parallel extent 1):
// it first fills its outputs (scatter: a copy of the operands;
// select-and-scatter: the init value), then walks the updates in row-major
// order, combining each into its target with the nested computation inlined.
#pragma once

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

}  // namespace kiln::llvm_ir
