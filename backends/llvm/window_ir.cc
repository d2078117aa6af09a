#include "backends/llvm/window_ir.h"

namespace kiln::llvm_ir {

llvm::Value* EmitWindowInputPosition(llvm::IRBuilder<>& b, const WindowDimension& w, int64_t extent,
                                     llvm::Value* output_index, llvm::Value* window_index,
                                     llvm::Value** inside) {
  llvm::Value* position = b.CreateSub(b.CreateAdd(b.CreateMul(output_index, b.getInt64(w.stride)),
                                                  b.CreateMul(window_index, b.getInt64(w.window_dilation))),
                                      b.getInt64(w.padding_low));
  *inside = b.CreateAnd(*inside, b.CreateICmpSGE(position, b.getInt64(0)));
  if (w.base_dilation > 1) {
    *inside = b.CreateAnd(*inside,
                          b.CreateICmpEQ(b.CreateSRem(position, b.getInt64(w.base_dilation)), b.getInt64(0)));
    position = b.CreateSDiv(position, b.getInt64(w.base_dilation));
  }
  *inside = b.CreateAnd(*inside, b.CreateICmpSLT(position, b.getInt64(extent)));
  return position;
}

}  // namespace kiln::llvm_ir
