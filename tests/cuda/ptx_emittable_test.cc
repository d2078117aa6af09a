// The CUDA backend's emittable table (backends/cuda/ptx_emittable.h) answers
// as CheckPtxEmittable on each instruction's own computation, over the
// whole corpus, and the device passes build no such computation.
#include "backends/cuda/ptx_emittable.h"

#include <gtest/gtest.h>

#include "backends/cuda/cuda_program.h"
#include "backends/cuda/ptx_compiler.h"
#include "tests/unit/emittable_agreement.h"

namespace kiln {
namespace {

TEST(PtxEmittableTable, AgreesWithCheckPtxEmittableOnEveryCorpusInstruction) {
  const std::vector<std::unique_ptr<Module>> modules = testing::CorpusModules();
  ASSERT_GT(modules.size(), 100u);
  const testing::Agreement agreement = testing::ExpectTableAgreesWithKernelCheck(
      cuda::PtxEmittableTable(), [](const Computation& kernel) { return cuda::CheckPtxEmittable(kernel); },
      modules);
  EXPECT_GT(agreement.instructions, 10000);
  EXPECT_GT(agreement.refused, 100);
}

TEST(PtxEmittableTable, DevicePassesOverTheCorpusBuildNoComputationPerInstruction) {
  std::vector<std::unique_ptr<Module>> modules = testing::CorpusModules();
  ASSERT_FALSE(modules.empty());
  const int64_t before = SingleInstructionComputationsBuilt();
  int fusions = 0;
  for (const auto& module : modules) {
    ASSERT_TRUE(cuda::RunCudaPasses(*module, 2).ok()) << module->name();
    for (const auto& computation : module->computations()) {
      for (const auto& instruction : computation->instructions())
        fusions += instruction->opcode == Opcode::kFusion;
    }
  }
  EXPECT_EQ(SingleInstructionComputationsBuilt(), before);
  EXPECT_GT(fusions, 100);
}

}  // namespace
}  // namespace kiln
