// Window arithmetic in LLVM IR, shared by reduce-window and
// select-and-scatter: where one element of a window falls in the input.
#pragma once

#include <cstdint>

#include <llvm/IR/IRBuilder.h>

#include "core/attributes.h"

namespace kiln::llvm_ir {

// The input position, along one dimension of `extent` elements, of the
// window element `window_index` of the window placed at `output_index`:
// output_index*stride + window_index*window_dilation - padding_low, divided
// by base_dilation. `*inside` is and-ed with whether that position is a real
// input element (not padding, not between base-dilated elements).
llvm::Value* EmitWindowInputPosition(llvm::IRBuilder<>& b, const WindowDimension& w, int64_t extent,
                                     llvm::Value* output_index, llvm::Value* window_index,
                                     llvm::Value** inside);

}  // namespace kiln::llvm_ir
