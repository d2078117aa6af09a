#include "backends/cpu/codegen/loop_ir.h"

#include <string>

namespace kiln::cpu::codegen {

Status EmitCountedLoop(llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end, const char* name,
                       const std::function<Status(llvm::Value*)>& body) {
  llvm::LLVMContext& context = b.getContext();
  llvm::Function* function = b.GetInsertBlock()->getParent();
  const std::string prefix(name);
  llvm::BasicBlock* preheader = b.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(context, prefix + ".header", function);
  llvm::BasicBlock* body_block = llvm::BasicBlock::Create(context, prefix + ".body", function);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(context, prefix + ".exit", function);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode* index = b.CreatePHI(begin->getType(), 2, prefix + ".i");
  index->addIncoming(begin, preheader);
  b.CreateCondBr(b.CreateICmpSLT(index, end), body_block, exit);
  b.SetInsertPoint(body_block);
  KILN_RETURN_IF_ERROR(body(index));
  llvm::Value* next = b.CreateAdd(index, llvm::ConstantInt::get(index->getType(), 1), prefix + ".next",
                                  /*HasNUW=*/true, /*HasNSW=*/true);
  index->addIncoming(next, b.GetInsertBlock());
  b.CreateBr(header);
  b.SetInsertPoint(exit);
  return OkStatus();
}

}  // namespace kiln::cpu::codegen
