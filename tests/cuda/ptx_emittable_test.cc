// The CUDA backend's emittable table (backends/cuda/ptx_emittable.h) answers
// as CheckPtxEmittable on each instruction's own computation, over the
// whole corpus, and the device passes build no such computation.
#include "backends/cuda/ptx_emittable.h"

#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "backends/cuda/cuda_program.h"
#include "backends/cuda/ptx_compiler.h"
#include "backends/cuda/ptx_export.h"
#include "core/hlo_parser.h"
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

// A pointer per buffer, the i64 extent and an rng key fit CUDA's 4 KiB of
// kernel parameters with a buffer to spare for scratch; fusion keeps every
// kernel within the table's limit and a single instruction past it is
// refused by name.
TEST(PtxEmittableTable, KernelsFitTheKernelParameterSpace) {
  const int64_t limit = cuda::PtxEmittableTable().max_kernel_buffers();
  EXPECT_LE((limit + 1) * 8 + 2 * 8, 4096);
  EXPECT_GT((limit + 2) * 8 + 2 * 8, 4096);
  // A sum of limit + 100 inputs, one add after another.
  const int inputs = static_cast<int>(limit) + 100;
  std::string text = "HloModule sum\nENTRY main {\n";
  for (int i = 0; i < inputs; ++i)
    text += "  p" + std::to_string(i) + " = f32[8] parameter(" + std::to_string(i) + ")\n";
  std::string last = "p0";
  for (int i = 1; i < inputs; ++i) {
    const std::string next = "s" + std::to_string(i);
    text += std::string(i + 1 == inputs ? "  ROOT " : "  ") + next + " = f32[8] add(" + last + ", p" +
            std::to_string(i) + ")\n";
    last = next;
  }
  text += "}\n";
  StatusOr<std::unique_ptr<Module>> sum = ParseHloModule(text);
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  ASSERT_TRUE(cuda::RunCudaPasses(**sum, 2).ok());
  int64_t widest = 0;
  for (const auto& instruction : (*sum)->entry()->instructions()) {
    if (instruction->opcode != Opcode::kFusion) continue;
    widest = std::max(widest, static_cast<int64_t>(instruction->operands.size()) + 1);
    EXPECT_TRUE(cuda::CheckPtxKernelBuffers(*instruction->called[0]).ok()) << instruction->name;
  }
  EXPECT_LE(widest, limit);
  EXPECT_GT(widest, 2);

  std::string wide = "HloModule concatenate\nENTRY main {\n";
  std::string operands;
  for (int i = 0; i < inputs; ++i) {
    wide += "  p" + std::to_string(i) + " = f32[1] parameter(" + std::to_string(i) + ")\n";
    operands += (i == 0 ? "p" : ", p") + std::to_string(i);
  }
  wide += "  ROOT c = f32[" + std::to_string(inputs) + "] concatenate(" + operands + "), dimensions={0}\n}\n";
  StatusOr<std::unique_ptr<Module>> concatenate = ParseHloModule(wide);
  ASSERT_TRUE(concatenate.ok()) << concatenate.status().ToString();
  const Status refused = cuda::ExportPtx(**concatenate, cuda::PtxTarget{}).status();
  EXPECT_EQ(refused.code(), StatusCode::kUnimplemented) << refused.ToString();
  EXPECT_NE(refused.message().find("concatenate"), std::string::npos) << refused.ToString();
  EXPECT_NE(refused.message().find("at most " + std::to_string(limit)), std::string::npos)
      << refused.ToString();
}

// 32764 bytes of kernel parameters from driver 12.1 on compute capability
// 7.0 and later, 4 KiB otherwise.
TEST(PtxEmittableTable, ParameterSpaceFollowsTheDriverAndTheCapability) {
  EXPECT_EQ(cuda::KernelParameterBytes(12010, 70), 32764);
  EXPECT_EQ(cuda::KernelParameterBytes(12080, 90), 32764);
  EXPECT_EQ(cuda::KernelParameterBytes(12000, 90), 4096) << "driver 12.0";
  EXPECT_EQ(cuda::KernelParameterBytes(12080, 61), 4096) << "sm_61";
  EXPECT_EQ(cuda::KernelParameterBytes(0, 80), 4096) << "no driver version";
  EXPECT_EQ(cuda::MaxKernelBuffers(4096), 509);
  EXPECT_EQ(cuda::MaxKernelBuffers(32764), 4092);
  EXPECT_EQ(cuda::PtxEmittableTable(4096).max_kernel_buffers(), 509);
  EXPECT_EQ(cuda::PtxEmittableTable(32764).max_kernel_buffers(), 4092);
}

// With the large parameter space a kernel of 601 buffers is emitted, as PTX
// ISA 8.1 (ptxas refuses more than 4352 bytes of parameters before it);
// a module whose kernels fit 4 KiB is the same PTX either way.
TEST(PtxEmittableTable, OnlyAKernelPastFourKiBAsksForPtx81) {
  std::string wide = "HloModule concatenate\nENTRY main {\n";
  std::string operands;
  for (int i = 0; i < 600; ++i) {
    wide += "  p" + std::to_string(i) + " = f32[1] parameter(" + std::to_string(i) + ")\n";
    operands += (i == 0 ? "p" : ", p") + std::to_string(i);
  }
  wide += "  ROOT c = f32[600] concatenate(" + operands + "), dimensions={0}\n}\n";
  StatusOr<std::unique_ptr<Module>> concatenate = ParseHloModule(wide);
  ASSERT_TRUE(concatenate.ok()) << concatenate.status().ToString();
  cuda::PtxTarget large;
  large.sm = 80;
  large.kernel_parameter_bytes = cuda::kLargeKernelParameterBytes;
  StatusOr<cuda::PtxExport> exported = cuda::ExportPtx(**concatenate, large);
  ASSERT_TRUE(exported.ok()) << exported.status().ToString();
  ASSERT_EQ(exported->kernels.size(), 1u);
  EXPECT_EQ(exported->kernels[0].buffer_count, 601);
  EXPECT_NE(exported->ptx.find(".version 8.1"), std::string::npos) << exported->ptx.substr(0, 400);

  StatusOr<std::unique_ptr<Module>> small = ParseHloModule(R"(HloModule add
ENTRY main {
  a = f32[100] parameter(0)
  b = f32[100] parameter(1)
  ROOT s = f32[100] add(a, b)
})");
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  cuda::PtxTarget portable;
  portable.sm = 80;
  StatusOr<cuda::PtxExport> as_portable = cuda::ExportPtx(**small, portable);
  StatusOr<cuda::PtxExport> as_large = cuda::ExportPtx(**small, large);
  ASSERT_TRUE(as_portable.ok() && as_large.ok());
  EXPECT_EQ(as_portable->ptx, as_large->ptx);
  EXPECT_EQ(as_portable->ptx.find(".version 8.1"), std::string::npos);
}

// Gathers join fused kernels on the CPU only (EmittableTable::fuses_gathers):
// the CUDA device passes leave a summed gather a kernel of its own.
TEST(PtxEmittableTable, AGatherStaysAKernelOfItsOwn) {
  EXPECT_FALSE(cuda::PtxEmittableTable().fuses_gathers());
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(R"(HloModule embedding_sum
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY main {
  table = f32[9,5] parameter(0)
  i = s32[7,1] parameter(1)
  g = f32[7,5] gather(table, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,5}
  zero = f32[] constant(0)
  ROOT s = f32[5] reduce(g, zero), dimensions={0}, to_apply=add
})");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  ASSERT_TRUE(cuda::RunCudaPasses(**module, 2).ok());
  int gathers = 0;
  for (const auto& instruction : (*module)->entry()->instructions())
    gathers += instruction->opcode == Opcode::kGather;
  EXPECT_EQ(gathers, 1);
}

}  // namespace
}  // namespace kiln
