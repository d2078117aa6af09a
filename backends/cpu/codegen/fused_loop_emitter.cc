#include "backends/cpu/codegen/fused_loop_emitter.h"

#include <algorithm>
#include <vector>

#include <llvm/IR/IRBuilder.h>

namespace kiln::cpu {
namespace {

// Where a kernel's buffers start in a trip kind's table.
struct PlacedKernel {
  FusedLoopKernel kernel;
  size_t first_pointer = 0;
};

}  // namespace

Status EmitFusedLoop(llvm::Module& module, const std::string& name,
                     std::span<const FusedLoopKernel> condition_kernels,
                     std::span<const FusedLoopKernel> body_kernels) {
  std::vector<PlacedKernel> kernels;
  size_t stride = 1;  // the predicate's address first
  for (std::span<const FusedLoopKernel> part : {condition_kernels, body_kernels}) {
    for (const FusedLoopKernel& kernel : part) {
      if (kernel.function == nullptr)
        return InvalidArgument("cpu codegen: loop ", name, " has a null kernel");
      kernel.function->addFnAttr(llvm::Attribute::AlwaysInline);
      kernels.push_back({kernel, stride});
      stride += kernel.buffers;
    }
  }
  llvm::LLVMContext& context = module.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(context);
  llvm::Type* i64 = llvm::Type::getInt64Ty(context);
  llvm::Type* i8 = llvm::Type::getInt8Ty(context);
  llvm::Function* loop = llvm::Function::Create(llvm::FunctionType::get(i64, {ptr, i64, i64, ptr}, false),
                                                llvm::GlobalValue::ExternalLinkage, name, module);
  loop->addFnAttr(llvm::Attribute::NoUnwind);
  // The tables are only read, and no kernel writes them.
  loop->addParamAttr(0, llvm::Attribute::NoAlias);
  loop->addParamAttr(0, llvm::Attribute::ReadOnly);
  loop->addParamAttr(0, llvm::Attribute::NoCapture);
  loop->addParamAttr(3, llvm::Attribute::NoAlias);
  loop->addParamAttr(3, llvm::Attribute::NoCapture);
  llvm::Value* tables = loop->getArg(0);
  llvm::Value* first_kind = loop->getArg(1);
  llvm::Value* max_trips = loop->getArg(2);
  llvm::Value* trips_out = loop->getArg(3);

  // One copy of the trip, over the current kind's pointers: check the trip
  // budget, run the condition, test the predicate, run the body, then go on
  // with the next kind's pointers (the odd kind after the first and the
  // even ones, the even kind after the odd ones). Loading a trip's pointers
  // costs a few L1 hits; three copies of the kernels, one per kind, would
  // cost three times the compile time for no measurable gain.
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(context, "entry", loop);
  llvm::BasicBlock* trip = llvm::BasicBlock::Create(context, "trip", loop);
  llvm::BasicBlock* condition = llvm::BasicBlock::Create(context, "condition", loop);
  llvm::BasicBlock* body = llvm::BasicBlock::Create(context, "body", loop);
  llvm::BasicBlock* paused = llvm::BasicBlock::Create(context, "paused", loop);
  llvm::BasicBlock* finished = llvm::BasicBlock::Create(context, "finished", loop);
  llvm::IRBuilder<> b(entry);
  llvm::Value* odd_table = b.CreateConstInBoundsGEP1_64(ptr, tables, stride, "odd_table");
  llvm::Value* even_table = b.CreateConstInBoundsGEP1_64(ptr, tables, 2 * stride, "even_table");
  llvm::Value* first_table =
      b.CreateInBoundsGEP(ptr, tables, b.CreateMul(first_kind, b.getInt64(static_cast<int64_t>(stride))));
  b.CreateBr(trip);

  b.SetInsertPoint(trip);
  llvm::PHINode* trips = b.CreatePHI(i64, 2, "trips");
  llvm::PHINode* table = b.CreatePHI(ptr, 2, "table");
  trips->addIncoming(b.getInt64(0), entry);
  table->addIncoming(first_table, entry);
  b.CreateCondBr(b.CreateICmpSGE(trips, max_trips), paused, condition);

  auto run = [&](const PlacedKernel& placed) {
    llvm::Value* buffers = b.CreateConstInBoundsGEP1_64(ptr, table, placed.first_pointer);
    b.CreateCall(placed.kernel.function,
                 {buffers, b.getInt64(0), b.getInt64(std::max<int64_t>(1, placed.kernel.extent))});
  };
  b.SetInsertPoint(condition);
  for (size_t k = 0; k < condition_kernels.size(); ++k) run(kernels[k]);
  llvm::Value* predicate = b.CreateLoad(i8, b.CreateLoad(ptr, table, "predicate_address"), "predicate");
  b.CreateCondBr(b.CreateICmpNE(predicate, b.getInt8(0)), body, finished);

  b.SetInsertPoint(body);
  for (size_t k = condition_kernels.size(); k < kernels.size(); ++k) run(kernels[k]);
  trips->addIncoming(b.CreateAdd(trips, b.getInt64(1), "next_trips", /*HasNUW=*/true, /*HasNSW=*/true), body);
  table->addIncoming(b.CreateSelect(b.CreateICmpEQ(table, odd_table), even_table, odd_table, "next_table"),
                     body);
  b.CreateBr(trip);

  b.SetInsertPoint(paused);
  b.CreateStore(trips, trips_out);
  b.CreateRet(b.getInt64(0));
  b.SetInsertPoint(finished);
  b.CreateStore(trips, trips_out);
  b.CreateRet(b.getInt64(1));
  return OkStatus();
}

}  // namespace kiln::cpu
