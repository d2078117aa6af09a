// Convolutions the runtime's oneDNN/Eigen paths do not take (f16, bf16,
// integers) computed elementally: each output element loops over the kernel
// window (row-major) and, inside, over the input features of its group,
// accumulating as the interpreter does (dot_emitter.h) and in the same
// order. A tap in the padding or between base-dilated inputs adds zero
// times its weights (README, numerics: "a convolution's padding"): NaN for
// an infinite or NaN weight; integers skip it.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include "backends/llvm/elemental_emitter.h"
#include "core/ir.h"
#include "core/status.h"

namespace kiln::llvm_ir {

// OK when `convolution` has consistent dimension numbers, window and group
// counts, and real, non-pred types.
Status CheckConvolutionEmittable(const Instruction& convolution);

// The value of `convolution` at output `index`.
StatusOr<llvm::Value*> EmitConvolutionElement(llvm::IRBuilder<>& b, ElementalEmitter& emitter,
                                              const Instruction& convolution, const IrIndex& index);

}  // namespace kiln::llvm_ir
