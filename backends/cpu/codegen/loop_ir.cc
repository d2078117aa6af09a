#include "backends/cpu/codegen/loop_ir.h"

#include <string>
#include <vector>

#include <llvm/IR/Metadata.h>

namespace kiln::cpu::codegen {

Status EmitCountedLoop(llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end, const char* name,
                       const std::function<Status(llvm::Value*)>& body, LoopKind kind) {
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
  llvm::BranchInst* latch = b.CreateBr(header);
  if (kind != LoopKind::kAccumulating) {
    // !llvm.loop !{self, !{"llvm.loop.interleave.count", i32 1}[, predication]}
    llvm::Metadata* count[] = {llvm::MDString::get(context, "llvm.loop.interleave.count"),
                               llvm::ConstantAsMetadata::get(b.getInt32(1))};
    llvm::TempMDTuple placeholder = llvm::MDNode::getTemporary(context, {});
    std::vector<llvm::Metadata*> operands = {placeholder.get(), llvm::MDNode::get(context, count)};
    if (kind == LoopKind::kPlainTail) {
      llvm::Metadata* predicate[] = {llvm::MDString::get(context, "llvm.loop.vectorize.predicate.enable"),
                                     llvm::ConstantAsMetadata::get(b.getTrue())};
      operands.push_back(llvm::MDNode::get(context, predicate));
    }
    llvm::MDNode* loop = llvm::MDNode::getDistinct(context, operands);
    loop->replaceOperandWith(0, loop);
    latch->setMetadata(llvm::LLVMContext::MD_loop, loop);
  }
  b.SetInsertPoint(exit);
  return OkStatus();
}

}  // namespace kiln::cpu::codegen
