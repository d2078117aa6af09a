#include "backends/cpu/codegen/fused_loop_emitter.h"

#include <algorithm>

#include <llvm/IR/IRBuilder.h>

#include "backends/llvm/kernel_emitter.h"

namespace kiln::cpu {
namespace {

// One kernel of the loop, emitted into the loop's module under a private
// name, and where its buffers start in a trip kind's table.
struct LoopKernel {
  llvm::Function* function = nullptr;
  int64_t extent = 1;
  size_t first_pointer = 0;
};

StatusOr<std::vector<LoopKernel>> EmitLoopKernels(llvm::Module& module, const FusedLoopRequest& request,
                                                  const llvm_ir::TargetHooks& target) {
  std::vector<LoopKernel> kernels;
  size_t next_pointer = 1;  // after the predicate's address
  for (const std::vector<const Computation*>* part : {&request.condition, &request.body}) {
    for (const Computation* computation : *part) {
      if (computation == nullptr)
        return InvalidArgument("cpu codegen: loop ", request.name, " has a null kernel");
      const std::string name = request.name + ".kernel" + std::to_string(kernels.size());
      KILN_ASSIGN_OR_RETURN(llvm_ir::KernelLayout layout,
                            llvm_ir::EmitKernel(module, *computation, name, target));
      llvm::Function* function = module.getFunction(name);
      if (function == nullptr) return Internal("cpu codegen: kernel ", name, " was not emitted");
      // Only this loop calls it, with its whole extent on one thread.
      function->setLinkage(llvm::GlobalValue::InternalLinkage);
      function->addFnAttr(llvm::Attribute::AlwaysInline);
      kernels.push_back({function, std::max<int64_t>(1, layout.parallel_extent), next_pointer});
      next_pointer += FusedLoopKernelBuffers(*computation);
    }
  }
  return kernels;
}

}  // namespace

Status EmitFusedLoop(llvm::Module& module, const FusedLoopRequest& request,
                     const llvm_ir::TargetHooks& target) {
  KILN_ASSIGN_OR_RETURN(std::vector<LoopKernel> kernels, EmitLoopKernels(module, request, target));
  const size_t stride = FusedLoopTripStride(request);
  llvm::LLVMContext& context = module.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(context);
  llvm::Type* i64 = llvm::Type::getInt64Ty(context);
  llvm::Type* i8 = llvm::Type::getInt8Ty(context);
  llvm::Function* loop = llvm::Function::Create(llvm::FunctionType::get(i64, {ptr, i64, i64, ptr}, false),
                                                llvm::GlobalValue::ExternalLinkage, request.name, module);
  loop->addFnAttr(llvm::Attribute::NoUnwind);
  // The tables are only read, and no kernel writes them: their loads are
  // loop-invariant, so LLVM keeps each trip kind's pointers in registers.
  loop->addParamAttr(0, llvm::Attribute::NoAlias);
  loop->addParamAttr(0, llvm::Attribute::ReadOnly);
  loop->addParamAttr(0, llvm::Attribute::NoCapture);
  loop->addParamAttr(3, llvm::Attribute::NoAlias);
  loop->addParamAttr(3, llvm::Attribute::NoCapture);
  llvm::Value* tables = loop->getArg(0);
  llvm::Value* first_kind = loop->getArg(1);
  llvm::Value* max_trips = loop->getArg(2);
  llvm::Value* trips_out = loop->getArg(3);

  // Blocks: one trip per kind. The first trip goes on to the odd one; odd
  // and even trips alternate, which is the loop. A trip first checks the
  // trip budget, runs the condition, tests the predicate, runs the body.
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(context, "entry", loop);
  llvm::BasicBlock* trip_blocks[3];
  for (int kind = 0; kind < 3; ++kind) {
    trip_blocks[kind] = llvm::BasicBlock::Create(context, "trip" + std::to_string(kind), loop);
  }
  llvm::BasicBlock* paused = llvm::BasicBlock::Create(context, "paused", loop);
  llvm::BasicBlock* finished = llvm::BasicBlock::Create(context, "finished", loop);
  llvm::IRBuilder<> b(entry);
  llvm::SwitchInst* dispatch = b.CreateSwitch(first_kind, trip_blocks[0], 2);
  dispatch->addCase(b.getInt64(1), trip_blocks[1]);
  dispatch->addCase(b.getInt64(2), trip_blocks[2]);

  b.SetInsertPoint(paused);
  llvm::PHINode* paused_trips = b.CreatePHI(i64, 3, "paused_trips");
  b.CreateStore(paused_trips, trips_out);
  b.CreateRet(b.getInt64(0));
  b.SetInsertPoint(finished);
  llvm::PHINode* finished_trips = b.CreatePHI(i64, 3, "finished_trips");
  b.CreateStore(finished_trips, trips_out);
  b.CreateRet(b.getInt64(1));

  const size_t condition_kernels = request.condition.size();
  llvm::PHINode* trips_at[3];
  for (int kind = 0; kind < 3; ++kind) {
    b.SetInsertPoint(trip_blocks[kind]);
    trips_at[kind] = b.CreatePHI(i64, 2, "trips");
    trips_at[kind]->addIncoming(b.getInt64(0), entry);
  }
  for (int kind = 0; kind < 3; ++kind) {
    llvm::BasicBlock* check = trip_blocks[kind];
    llvm::BasicBlock* condition = llvm::BasicBlock::Create(context, "condition" + std::to_string(kind), loop);
    llvm::BasicBlock* body = llvm::BasicBlock::Create(context, "body" + std::to_string(kind), loop);
    llvm::PHINode* trips = trips_at[kind];
    b.SetInsertPoint(check);
    paused_trips->addIncoming(trips, check);
    b.CreateCondBr(b.CreateICmpSGE(trips, max_trips), paused, condition);

    b.SetInsertPoint(condition);
    llvm::Value* table = b.CreateConstInBoundsGEP1_64(ptr, tables, static_cast<uint64_t>(kind) * stride);
    auto run = [&](const LoopKernel& kernel) {
      llvm::Value* buffers = b.CreateConstInBoundsGEP1_64(ptr, table, kernel.first_pointer);
      b.CreateCall(kernel.function, {buffers, b.getInt64(0), b.getInt64(kernel.extent)});
    };
    for (size_t k = 0; k < condition_kernels; ++k) run(kernels[k]);
    llvm::Value* predicate = b.CreateLoad(i8, b.CreateLoad(ptr, table, "predicate_address"), "predicate");
    finished_trips->addIncoming(trips, condition);
    b.CreateCondBr(b.CreateICmpNE(predicate, b.getInt8(0)), body, finished);

    b.SetInsertPoint(body);
    for (size_t k = condition_kernels; k < kernels.size(); ++k) run(kernels[k]);
    llvm::Value* next_trips =
        b.CreateAdd(trips, b.getInt64(1), "next_trips", /*HasNUW=*/true, /*HasNSW=*/true);
    const int next_kind = kind == 1 ? 2 : 1;
    trips_at[next_kind]->addIncoming(next_trips, body);
    b.CreateBr(trip_blocks[next_kind]);
  }
  return OkStatus();
}

}  // namespace kiln::cpu
