#include "backends/cuda/whole_loop_emitter.h"

#include <functional>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "backends/cuda/gpu_entry.h"

namespace kiln::cuda {
namespace {

// bar.sync 0: every thread of the block waits here, and what each wrote
// before it (global memory included) is seen by all after it. It is also
// an unknown memory effect to LLVM, so no load or store moves across it.
void EmitLoopBarrier(llvm::IRBuilder<>& b) { b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); }

// Runs `work(i)` for i = thread, thread + kThreadsPerBlock, ... below
// `count` (the block's threads share the step's iterations in order, so
// 32 consecutive iterations are one warp's lanes, as a kernel's own launch
// has them), then the barrier.
void EmitStridedLoopStep(llvm::IRBuilder<>& b, llvm::Value* thread, int64_t count,
                         const std::function<void(llvm::Value*)>& work) {
  llvm::Function* function = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& context = function->getContext();
  llvm::BasicBlock* before = b.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(context, "step", function);
  llvm::BasicBlock* iteration = llvm::BasicBlock::Create(context, "step_iteration", function);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(context, "step_done", function);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode* index = b.CreatePHI(b.getInt64Ty(), 2, "index");
  index->addIncoming(thread, before);
  b.CreateCondBr(b.CreateICmpULT(index, b.getInt64(static_cast<uint64_t>(count))), iteration, done);
  b.SetInsertPoint(iteration);
  work(index);
  index->addIncoming(b.CreateAdd(index, b.getInt64(kThreadsPerBlock), "next_index", /*HasNUW=*/true),
                     b.GetInsertBlock());
  b.CreateBr(header);
  b.SetInsertPoint(done);
  EmitLoopBarrier(b);
}

// What a launch step calls: its kernel's iteration function and extent,
// and the table of buffer pointers the function reads.
struct ResolvedLoopLaunch {
  llvm::Function* iteration = nullptr;
  int64_t extent = 0;
  llvm::Value* table = nullptr;
  const WholeLoopStep* step = nullptr;
};

}  // namespace

StatusOr<bool> EmitWholeLoopKernel(llvm::Module& module, const WholeLoopKernel& loop,
                                   std::span<const PtxKernel> kernels) {
  if (loop.predicate < 0 || loop.predicate >= loop.pointers)
    return Internal("cuda: loop kernel ", loop.name, " has no predicate pointer");
  // Every step is checked before anything is added; the launches are
  // resolved in the order the emission below meets them (branches in
  // order, depth first).
  std::vector<ResolvedLoopLaunch> launches;
  std::function<StatusOr<bool>(const std::vector<WholeLoopStep>&)> resolve =
      [&](const std::vector<WholeLoopStep>& steps) -> StatusOr<bool> {
    for (const WholeLoopStep& step : steps) {
      for (int pointer : step.buffers) {
        if (pointer < 0 || pointer >= loop.pointers)
          return Internal("cuda: loop kernel ", loop.name, " names pointer ", pointer, " of ", loop.pointers);
      }
      if (!step.branches.empty()) {
        if (step.selector < 0 || step.selector >= loop.pointers ||
            (step.selector_type != ElementType::kPred && step.selector_type != ElementType::kS32) ||
            (step.selector_type == ElementType::kPred && step.branches.size() != 2))
          return Internal("cuda: loop kernel ", loop.name, " has a malformed conditional");
        for (const std::vector<WholeLoopStep>& branch : step.branches) {
          KILN_ASSIGN_OR_RETURN(const bool resolved, resolve(branch));
          if (!resolved) return false;
        }
        continue;
      }
      if (step.kernel < 0) {
        if (step.buffers.size() != 2 || step.bytes <= 0)
          return Internal("cuda: loop kernel ", loop.name, " has a malformed copy");
        continue;
      }
      if (static_cast<size_t>(step.kernel) >= kernels.size())
        return Internal("cuda: loop kernel ", loop.name, " runs kernel ", step.kernel, " of ",
                        kernels.size());
      const PtxKernel& kernel = kernels[static_cast<size_t>(step.kernel)];
      if (static_cast<size_t>(kernel.buffer_count) != step.buffers.size())
        return Internal("cuda: loop kernel ", loop.name, " gives ", kernel.name, " ", step.buffers.size(),
                        " buffers, not ", kernel.buffer_count);
      llvm::Function* iteration = module.getFunction(kernel.name + ".iteration");
      if (iteration == nullptr || iteration->arg_size() != 3 || kernel.takes_rng_key ||
          kernel.parallel_extent < 1 || kernel.parallel_extent > kWholeLoopMaxExtent)
        return false;
      launches.push_back({iteration, kernel.parallel_extent, nullptr, &step});
    }
    return true;
  };
  for (const std::vector<WholeLoopStep>* part : {&loop.condition, &loop.body}) {
    KILN_ASSIGN_OR_RETURN(const bool resolved, resolve(*part));
    if (!resolved) return false;
  }

  llvm::LLVMContext& context = module.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(context);
  llvm::Type* i64 = llvm::Type::getInt64Ty(context);
  std::vector<llvm::Type*> parameters = {ptr, i64};
  parameters.insert(parameters.end(), static_cast<size_t>(loop.pointers), ptr);
  llvm::Function* function =
      llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(context), parameters, false),
                             llvm::GlobalValue::ExternalLinkage, loop.name, module);
  function->addFnAttr(llvm::Attribute::NoUnwind);
  MarkGpuKernel(module, *function);
  llvm::Value* status = function->getArg(0);
  llvm::Value* max_trips = function->getArg(1);
  auto pointer = [&](int index) { return function->getArg(static_cast<unsigned>(2 + index)); };

  llvm::BasicBlock* entry = llvm::BasicBlock::Create(context, "entry", function);
  llvm::BasicBlock* trip = llvm::BasicBlock::Create(context, "trip", function);
  llvm::BasicBlock* condition = llvm::BasicBlock::Create(context, "condition", function);
  llvm::BasicBlock* paused = llvm::BasicBlock::Create(context, "paused", function);
  llvm::BasicBlock* finished = llvm::BasicBlock::Create(context, "finished", function);
  llvm::IRBuilder<> b(entry);
  llvm::Value* thread =
      b.CreateZExt(b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {}), i64, "thread");
  // Each launch's buffer table (the iteration function's `buffers`),
  // filled once; inlining turns its loads into the parameters.
  for (ResolvedLoopLaunch& launch : launches) {
    const std::vector<int>& buffers = launch.step->buffers;
    launch.table = b.CreateAlloca(ptr, b.getInt32(static_cast<uint32_t>(buffers.size())));
    for (size_t i = 0; i < buffers.size(); ++i)
      b.CreateStore(pointer(buffers[i]), b.CreateConstInBoundsGEP1_64(ptr, launch.table, i));
  }
  b.CreateBr(trip);

  // trip: stop when the budget is spent; else the condition's steps, the
  // predicate (read by every thread, then a barrier before any step can
  // reuse its bytes), the body's steps and the copies into the state.
  b.SetInsertPoint(trip);
  llvm::PHINode* trips = b.CreatePHI(i64, 2, "trips");
  trips->addIncoming(b.getInt64(0), entry);
  b.CreateCondBr(b.CreateICmpSGE(trips, max_trips), paused, condition);

  size_t next_launch = 0;
  std::function<void(const WholeLoopStep&)> run = [&](const WholeLoopStep& step) {
    if (!step.branches.empty()) {
      // Every thread reads the selector, meets the others (a branch may
      // write over its bytes), and all take the one branch: pred true runs
      // branch 0; an s32 out of range runs the last.
      const auto last = static_cast<int64_t>(step.branches.size()) - 1;
      llvm::Value* branch = nullptr;
      if (step.selector_type == ElementType::kPred) {
        llvm::Value* flag = b.CreateLoad(b.getInt8Ty(), pointer(step.selector), "selector");
        branch = b.CreateSelect(b.CreateICmpNE(flag, b.getInt8(0)), b.getInt32(0), b.getInt32(1), "branch");
      } else {
        llvm::Value* index = b.CreateLoad(b.getInt32Ty(), pointer(step.selector), "selector");
        branch = b.CreateSelect(b.CreateICmpUGT(index, b.getInt32(static_cast<uint32_t>(last))),
                                b.getInt32(static_cast<uint32_t>(last)), index, "branch");
      }
      EmitLoopBarrier(b);
      llvm::BasicBlock* merge = llvm::BasicBlock::Create(context, "branches_done", function);
      std::vector<llvm::BasicBlock*> blocks;
      for (size_t i = 0; i < step.branches.size(); ++i)
        blocks.push_back(llvm::BasicBlock::Create(context, "branch" + std::to_string(i), function));
      llvm::SwitchInst* choose = b.CreateSwitch(branch, blocks.back(), static_cast<unsigned>(last));
      for (int64_t i = 0; i < last; ++i)
        choose->addCase(b.getInt32(static_cast<uint32_t>(i)), blocks[static_cast<size_t>(i)]);
      for (size_t i = 0; i < step.branches.size(); ++i) {
        b.SetInsertPoint(blocks[i]);
        for (const WholeLoopStep& inner : step.branches[i]) run(inner);
        b.CreateBr(merge);
      }
      b.SetInsertPoint(merge);
      return;
    }
    if (step.kernel >= 0) {
      const ResolvedLoopLaunch& launch = launches[next_launch++];
      EmitStridedLoopStep(b, thread, launch.extent, [&](llvm::Value* index) {
        b.CreateCall(launch.iteration, {launch.table, index, b.CreateAdd(index, b.getInt64(1))});
      });
      return;
    }
    // A copy in the widest words its size allows (every slot starts 256-byte aligned).
    const int64_t width = step.bytes % 8 == 0 ? 8 : step.bytes % 4 == 0 ? 4 : step.bytes % 2 == 0 ? 2 : 1;
    llvm::Type* word = b.getIntNTy(static_cast<unsigned>(8 * width));
    const llvm::Align align(static_cast<uint64_t>(width));
    llvm::Value* source = pointer(step.buffers[0]);
    llvm::Value* target = pointer(step.buffers[1]);
    EmitStridedLoopStep(b, thread, step.bytes / width, [&](llvm::Value* index) {
      llvm::Value* value = b.CreateAlignedLoad(word, b.CreateInBoundsGEP(word, source, index), align);
      b.CreateAlignedStore(value, b.CreateInBoundsGEP(word, target, index), align);
    });
  };
  b.SetInsertPoint(condition);
  for (const WholeLoopStep& step : loop.condition) run(step);
  llvm::Value* predicate = b.CreateLoad(b.getInt8Ty(), pointer(loop.predicate), "predicate");
  EmitLoopBarrier(b);
  llvm::BasicBlock* body = llvm::BasicBlock::Create(context, "body", function);
  b.CreateCondBr(b.CreateICmpNE(predicate, b.getInt8(0)), body, finished);
  b.SetInsertPoint(body);
  for (const WholeLoopStep& step : loop.body) run(step);
  trips->addIncoming(b.CreateAdd(trips, b.getInt64(1), "next_trips", /*HasNUW=*/true, /*HasNSW=*/true),
                     b.GetInsertBlock());
  b.CreateBr(trip);

  // Thread 0 reports; the others are done.
  auto report = [&](llvm::BasicBlock* from, int64_t done) {
    b.SetInsertPoint(from);
    llvm::BasicBlock* write = llvm::BasicBlock::Create(context, from->getName() + "_report", function);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(context, from->getName() + "_exit", function);
    b.CreateCondBr(b.CreateICmpEQ(thread, b.getInt64(0)), write, exit);
    b.SetInsertPoint(write);
    b.CreateStore(trips, status);
    b.CreateStore(b.getInt64(static_cast<uint64_t>(done)), b.CreateConstInBoundsGEP1_64(i64, status, 1));
    b.CreateBr(exit);
    b.SetInsertPoint(exit);
    b.CreateRetVoid();
  };
  report(paused, 0);
  report(finished, 1);
  return true;
}

}  // namespace kiln::cuda
