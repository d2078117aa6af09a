// The hints Kiln's loops give LLVM's vectoriser, read from the emitted IR
// (loop_ir.h): how far each loop may be interleaved and which loops are
// masked instead of given remainder loops.
#include <algorithm>
#include <string>
#include <vector>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "backends/cpu/codegen/cpu_target_hooks.h"
#include "backends/llvm/kernel_emitter.h"
#include "tests/cpu/codegen_test_util.h"

namespace kiln::cpu::testing {
namespace {

// One loop's hints.
struct LoopHints {
  int interleave = 0;  // 0: not given, LLVM chooses
  bool masked = false;
};

// EmitCountedLoop's latch: the block that branches back to a loop header
// with the induction variable's ".next" value.
bool IsLatch(llvm::BasicBlock& block) {
  auto* branch = llvm::dyn_cast_or_null<llvm::BranchInst>(block.getTerminator());
  if (branch == nullptr || branch->isConditional()) return false;
  llvm::BasicBlock* header = branch->getSuccessor(0);
  auto* index = llvm::dyn_cast<llvm::PHINode>(&header->front());
  if (!header->getName().contains(".header") || index == nullptr) return false;
  llvm::Value* incoming = index->getIncomingValueForBlock(&block);
  return incoming != nullptr && incoming->getName().contains(".next");
}

std::vector<LoopHints> HintsOfKernel(const std::string& hlo) {
  auto module = ParseHloModule(hlo);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return {};
  llvm::LLVMContext context;
  llvm::Module llvm_module("hints", context);
  const codegen::CpuTargetHooks target;
  auto layout = llvm_ir::EmitKernel(llvm_module, *(*module)->entry(), "kernel", target);
  EXPECT_TRUE(layout.ok()) << layout.status().ToString();
  std::vector<LoopHints> loops;
  for (llvm::Function& function : llvm_module) {
    for (llvm::BasicBlock& block : function) {
      if (!IsLatch(block)) continue;
      llvm::MDNode* loop = block.getTerminator()->getMetadata(llvm::LLVMContext::MD_loop);
      LoopHints hints;
      for (unsigned i = 1; loop != nullptr && i < loop->getNumOperands(); ++i) {
        auto* entry = llvm::dyn_cast<llvm::MDNode>(loop->getOperand(i));
        auto* key = entry == nullptr ? nullptr : llvm::dyn_cast<llvm::MDString>(entry->getOperand(0));
        if (key == nullptr) continue;
        if (key->getString() == "llvm.loop.interleave.count") {
          hints.interleave = static_cast<int>(
              llvm::mdconst::extract<llvm::ConstantInt>(entry->getOperand(1))->getZExtValue());
        }
        if (key->getString() == "llvm.loop.vectorize.predicate.enable") hints.masked = true;
      }
      loops.push_back(hints);
    }
  }
  return loops;
}

int CountLoops(const std::vector<LoopHints>& loops, int interleave, bool masked) {
  return static_cast<int>(std::count_if(loops.begin(), loops.end(), [&](const LoopHints& hints) {
    return hints.interleave == interleave && hints.masked == masked;
  }));
}

// Softmax: the max reduction's loop is left to LLVM (interleaved to hide the
// max's latency), the sum of exponentials' loop, which calls exp, at most
// twofold, and the plain loops (rows, outputs) not at all.
TEST(CodegenLoopHints, ReductionCallingExpInterleavesTwofoldAtMost) {
  const std::vector<LoopHints> loops = HintsOfKernel(Softmax("f32", 64, 1024));
  EXPECT_EQ(CountLoops(loops, 0, false), 1) << "the max reduction";
  EXPECT_EQ(CountLoops(loops, 2, false), 1) << "the sum of exponentials";
  EXPECT_EQ(CountLoops(loops, 1, false), 2) << "rows and outputs";
  EXPECT_EQ(CountLoops(loops, 1, true), 0);
}

// A row longer than one parallel block and not a multiple of it: its full
// blocks' loop is plain, its last block's masked.
TEST(CodegenLoopHints, ShorterLastBlockIsMasked) {
  const std::vector<LoopHints> loops = HintsOfKernel(
      "HloModule m\nENTRY e {\n  a = f32[100000] parameter(0)\n  ROOT n = f32[100000] exponential(a)\n}\n");
  EXPECT_EQ(CountLoops(loops, 1, true), 1) << "the last block";
  EXPECT_EQ(CountLoops(loops, 1, false), 2) << "blocks and full blocks";
  const std::vector<LoopHints> even = HintsOfKernel(
      "HloModule m\nENTRY e {\n  a = f32[98304] parameter(0)\n  ROOT n = f32[98304] exponential(a)\n}\n");
  EXPECT_EQ(CountLoops(even, 1, true), 0) << "98304 is six whole blocks";
}

}  // namespace
}  // namespace kiln::cpu::testing
