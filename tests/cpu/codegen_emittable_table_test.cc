// The CPU backend's emittable table (backends/llvm/emittable.h): what fusion
// asks of each instruction is answered by opcode and element type, as
// CheckEmittable answers for the instruction's own computation, and
// without building that computation.
#include <gtest/gtest.h>

#include "backends/llvm/emittable.h"
#include "core/passes/pipeline.h"
#include "tests/unit/emittable_agreement.h"

namespace kiln::cpu::testing {
namespace {

TEST(CpuEmittableTable, AgreesWithCheckEmittableOnEveryCorpusInstruction) {
  const std::vector<std::unique_ptr<Module>> modules = kiln::testing::CorpusModules();
  ASSERT_GT(modules.size(), 100u);
  const kiln::testing::Agreement agreement = kiln::testing::ExpectTableAgreesWithKernelCheck(
      llvm_ir::CpuEmittableTable(), [](const Computation& kernel) { return llvm_ir::CheckEmittable(kernel); },
      modules);
  EXPECT_GT(agreement.instructions, 10000);
  // Both refuse things (sorts, while loops, custom calls...), so agreeing is
  // not agreeing that everything can be emitted.
  EXPECT_GT(agreement.refused, 100);
}

// The one-instruction cases CheckEmittable treats apart (a scatter root,
// tuple results of one loop nest or not, a tuple operand, complex
// refusals), with the same answers.
TEST(CpuEmittableTable, AgreesOnRootsTheKernelCheckTreatsApart) {
  auto module = ParseHloModule(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
max_pair {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  m = f32[] maximum(a, b)
  k = s32[] maximum(i, j)
  ROOT t = (f32[], s32[]) tuple(m, k)
}
ENTRY e {
  p = f32[4,8] parameter(0)
  c = c64[4] parameter(1)
  q = s32[4,8] parameter(2)
  ids = s32[3,1] parameter(3)
  rows = f32[3,8] parameter(4)
  n = f32[4,8] negate(p)
  t = f32[4,8] tanh(n)
  eq = pred[4] compare(c, c), direction=EQ
  bits = c64[4] bitcast-convert(c)
  zero = f32[] constant(0)
  izero = s32[] constant(0)
  r = f32[4] reduce(t, zero), dimensions={1}, to_apply=add
  pair = (f32[4], s32[4]) reduce(p, q, zero, izero), dimensions={1}, to_apply=max_pair
  g = f32[4] get-tuple-element(pair), index=0
  sc = f32[4,8] scatter(p, ids, rows), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  sq = f32[4,8] multiply(sc, sc)
  mixed = (f32[4], f32[4,8]) tuple(r, sq)
  ROOT out = (f32[4], pred[4], c64[4], f32[4], (f32[4], f32[4,8])) tuple(r, eq, bits, g, mixed)
})");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  int refused = 0;
  for (const auto& instruction : (*module)->entry()->instructions()) {
    if (instruction->opcode == Opcode::kParameter) continue;  // never a fusion candidate
    const Status by_table = llvm_ir::CpuEmittableTable().Check(*instruction);
    const Status by_kernel = llvm_ir::CheckEmittable(*SingleInstructionComputation(*instruction, "single"));
    EXPECT_EQ(by_table.code(), by_kernel.code())
        << instruction->ToString() << ": " << by_table.ToString() << " vs " << by_kernel.ToString();
    if (!by_kernel.ok()) ++refused;
  }
  // Reinterpreting complex bits, outputs of different dimensions, tuple
  // operands.
  EXPECT_GE(refused, 3);
}

TEST(CpuEmittableTable, FusionOverTheCorpusBuildsNoComputationPerInstruction) {
  std::vector<std::unique_ptr<Module>> modules = kiln::testing::CorpusModules();
  ASSERT_FALSE(modules.empty());
  PipelineOptions options;
  options.can_fuse = [](const Instruction& instruction) {
    return llvm_ir::CpuEmittableTable().Check(instruction).ok();
  };
  const int64_t before = SingleInstructionComputationsBuilt();
  int fusions = 0;
  for (const auto& module : modules) {
    ASSERT_TRUE(RunOptimizationPipeline(*module, options).ok()) << module->name();
    for (const auto& computation : module->computations()) {
      for (const auto& instruction : computation->instructions())
        fusions += instruction->opcode == Opcode::kFusion;
    }
  }
  EXPECT_EQ(SingleInstructionComputationsBuilt(), before);
  EXPECT_GT(fusions, 100);  // fusion ran and asked the table
}

}  // namespace
}  // namespace kiln::cpu::testing
