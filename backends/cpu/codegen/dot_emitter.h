// Dot products the runtime's matrix multiply does not take (f16, bf16,
// integers, mixed operand types) computed elementally: each output element
// is one loop over the contracting dimensions, accumulating as the
// interpreter does (f16/bf16/f32 in float, f64 in double, integers in
// wrapping 64-bit arithmetic), then converted to the result type.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include "backends/cpu/codegen/elemental_emitter.h"
#include "core/ir.h"
#include "core/status.h"

namespace kiln::cpu::codegen {

// The element type dot accumulates `result` in.
ElementType DotAccumulationType(ElementType result);

// OK when `dot` has well-formed dimension numbers and real, non-pred types.
Status CheckDotEmittable(const Instruction& dot);

// The value of `dot` at output `index`.
StatusOr<llvm::Value*> EmitDotElement(llvm::IRBuilder<>& b, ElementalEmitter& emitter, const Instruction& dot,
                                      const IrIndex& index);

}  // namespace kiln::cpu::codegen
