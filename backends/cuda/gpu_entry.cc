#include "backends/cuda/gpu_entry.h"

#include <vector>

#include <llvm/IR/Constants.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Metadata.h>

#include "backends/cuda/ptx_compiler.h"

namespace kiln::cuda {

GpuEntry BeginGpuEntry(llvm::Module& module, const std::string& name, int buffer_count,
                       int extra_i64_params) {
  llvm::LLVMContext& context = module.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(context);
  llvm::Type* i64 = llvm::Type::getInt64Ty(context);
  std::vector<llvm::Type*> params(static_cast<size_t>(buffer_count), ptr);
  params.push_back(i64);
  for (int i = 0; i < extra_i64_params; ++i) params.push_back(i64);
  GpuEntry entry;
  entry.function =
      llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(context), params, false),
                             llvm::GlobalValue::ExternalLinkage, name, module);
  entry.function->addFnAttr(llvm::Attribute::NoUnwind);
  entry.entry_block = llvm::BasicBlock::Create(context, "entry", entry.function);
  llvm::BasicBlock* run = llvm::BasicBlock::Create(context, "run", entry.function);
  entry.done = llvm::BasicBlock::Create(context, "done", entry.function);
  entry.builder = std::make_unique<llvm::IRBuilder<>>(entry.entry_block);
  llvm::IRBuilder<>& b = *entry.builder;
  auto special = [&](llvm::Intrinsic::ID id) { return b.CreateZExt(b.CreateIntrinsic(id, {}, {}), i64); };
  llvm::Value* block = special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
  llvm::Value* width = special(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
  llvm::Value* thread = special(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  entry.thread = b.CreateAdd(b.CreateMul(block, width), thread, "iteration");
  llvm::Value* extent = entry.function->getArg(static_cast<unsigned>(buffer_count));
  b.CreateCondBr(b.CreateICmpULT(entry.thread, extent), run, entry.done);
  b.SetInsertPoint(run);
  MarkGpuKernel(module, *entry.function);
  return entry;
}

void MarkGpuKernel(llvm::Module& module, llvm::Function& function) {
  llvm::LLVMContext& context = module.getContext();
  // LLVM 19 marks kernels, and their block size, through nvvm.annotations.
  llvm::NamedMDNode* annotations = module.getOrInsertNamedMetadata("nvvm.annotations");
  auto annotate = [&](const char* key, int value) {
    annotations->addOperand(llvm::MDNode::get(
        context,
        {llvm::ValueAsMetadata::get(&function), llvm::MDString::get(context, key),
         llvm::ValueAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(context), value))}));
  };
  annotate("kernel", 1);
  annotate("maxntidx", kThreadsPerBlock);
}

void FinishGpuEntry(GpuEntry& entry) {
  llvm::IRBuilder<>& b = *entry.builder;
  b.CreateBr(entry.done);
  b.SetInsertPoint(entry.done);
  b.CreateRetVoid();
}

}  // namespace kiln::cuda
