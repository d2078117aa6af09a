// A reduce over dimensions of one emits no loop for them (elemental
// emitter): JAX's bounds check of gather indices reduces the index vector
// dimension, of one element, and a one-trip loop inside a fused gather's
// row loop kept LLVM from vectorising that loop. The results still match
// the interpreter.
#include <string>
#include <vector>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "backends/cpu/codegen/cpu_target_hooks.h"
#include "backends/llvm/kernel_emitter.h"
#include "tests/cpu/codegen_test_util.h"

namespace kiln::cpu::testing {
namespace {

// The loops over reduced dimensions in the kernel emitted for `hlo`'s
// entry: EmitCountedLoop names their headers "reduce.header".
int ReduceLoopsEmitted(const std::string& hlo) {
  auto module = ParseHloModule(hlo);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return -1;
  llvm::LLVMContext context;
  llvm::Module llvm_module("degenerate_reduce", context);
  const codegen::CpuTargetHooks target;
  auto layout = llvm_ir::EmitKernel(llvm_module, *(*module)->entry(), "kernel", target);
  EXPECT_TRUE(layout.ok()) << layout.status().ToString();
  int loops = 0;
  for (llvm::Function& function : llvm_module) {
    for (llvm::BasicBlock& block : function) loops += block.getName().starts_with("reduce.header");
  }
  return loops;
}

// A bounds check as JAX writes it, over an index vector of `width`.
std::string BoundsCheckModule(int width) {
  const std::string dims = "[4,16," + std::to_string(width) + "]";
  return "HloModule bounds\n"
         "and_all {\n"
         "  a = pred[] parameter(0)\n"
         "  b = pred[] parameter(1)\n"
         "  ROOT r = pred[] and(a, b)\n"
         "}\n"
         "ENTRY e {\n"
         "  i = s32" +
         dims +
         " parameter(0)\n"
         "  x = f32[4,16] parameter(1)\n"
         "  zero = s32[] constant(0)\n"
         "  zeros = s32" +
         dims +
         " broadcast(zero), dimensions={}\n"
         "  above = pred" +
         dims +
         " compare(i, zeros), direction=GE\n"
         "  yes = pred[] constant(true)\n"
         "  inside = pred[4,16] reduce(above, yes), dimensions={2}, to_apply=and_all\n"
         "  nan = f32[] constant(nan)\n"
         "  nans = f32[4,16] broadcast(nan), dimensions={}\n"
         "  ROOT r = f32[4,16] select(inside, x, nans)\n"
         "}\n";
}

TEST(CodegenDegenerateReduce, ADimensionOfOneIsReducedWithoutALoop) {
  EXPECT_EQ(ReduceLoopsEmitted(BoundsCheckModule(1)), 0);
  EXPECT_EQ(ReduceLoopsEmitted(BoundsCheckModule(3)), 1);
}

TEST(CodegenDegenerateReduce, SumsOverDimensionsOfOneMatchTheInterpreter) {
  const std::string hlo = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY e {
  x = f32[3,1,5,1] parameter(0)
  init = f32[] constant(0.5)
  ROOT s = f32[3,5] reduce(x, init), dimensions={1,3}, to_apply=add
})";
  CompareWithInterpreter(hlo, {MakeInput(Shape(ElementType::kF32, {3, 1, 5, 1}), 9)}, "sum over ones");
}

}  // namespace
}  // namespace kiln::cpu::testing
