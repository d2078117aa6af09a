// Dot products the runtime's matrix multiply does not take (f16, bf16,
// integers, mixed operand types) computed elementally: each output element
// is one loop over the contracting dimensions, accumulating as the
// interpreter does (f16/bf16/f32 in float, f64 in double, integers in
// wrapping 64-bit arithmetic), then converted to the result type.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include "backends/llvm/elemental_emitter.h"
#include "core/ir.h"
#include "core/status.h"

namespace kiln::llvm_ir {

// The element type dot accumulates `result` in.
ElementType DotAccumulationType(ElementType result);

// One contraction output's running sum (an alloca that mem2reg turns into a
// register), in the accumulation type of the result; shared by the dot and
// convolution emitters.
class ProductAccumulator {
 public:
  ProductAccumulator(llvm::IRBuilder<>& b, ElementalEmitter& emitter, ElementType result, const char* name);
  // Adds lhs(lhs_index) * rhs(rhs_index), each converted to the accumulation type.
  Status Add(const Instruction& lhs, const IrIndex& lhs_index, const Instruction& rhs,
             const IrIndex& rhs_index);
  // Adds 0 * rhs(rhs_index): a convolution tap in the padding, whose zero
  // takes part in the product (NaN for an infinite or NaN weight). Emits
  // nothing for integer accumulation, where the product is 0.
  Status AddZeroTimes(const Instruction& rhs, const IrIndex& rhs_index);
  // The sum converted to the result type.
  llvm::Value* Result();

 private:
  llvm::IRBuilder<>& b_;
  ElementalEmitter& emitter_;
  ElementType result_, accumulation_;
  llvm::Type* type_;
  llvm::AllocaInst* sum_;
};

// OK when `dot` has well-formed dimension numbers and real, non-pred types.
Status CheckDotEmittable(const Instruction& dot);

// The value of `dot` at output `index`.
StatusOr<llvm::Value*> EmitDotElement(llvm::IRBuilder<>& b, ElementalEmitter& emitter, const Instruction& dot,
                                      const IrIndex& index);

}  // namespace kiln::llvm_ir
