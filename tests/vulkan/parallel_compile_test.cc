// A module's kernels are compiled to SPIR-V and made into pipelines on
// several threads (backends/vulkan/parallel_compile.h): every task runs
// once, the error reported is the lowest failing kernel's whatever the
// timing, and the SPIR-V and results are those of a serial compile.
#include "backends/vulkan/parallel_compile.h"

#include <atomic>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "backends/vulkan/shader_compiler.h"
#include "backends/vulkan/vulkan_program.h"
#include "core/hlo_parser.h"
#include "tests/vulkan/interpreter_agreement.h"

namespace kiln::vulkan {
namespace {

// Dots are never fused, and the softmax around them adds reductions and
// elementwise kernels: a program of several kernels of different kinds.
constexpr char kManyKernels[] = R"(HloModule many_kernels
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[32,32] parameter(0)
  w = f32[32,32] parameter(1)
  d1 = f32[32,32] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[32,32] dot(d1, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ex = f32[32,32] exponential(d2)
  zero = f32[] constant(0)
  s = f32[32] reduce(ex, zero), dimensions={1}, to_apply=add
  b = f32[32,32] broadcast(s), dimensions={0}
  q = f32[32,32] divide(ex, b)
  ROOT d3 = f32[32,32] dot(q, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

// Restores the default thread count when a test ends, passed or not.
class CompileThreadsGuard {
 public:
  explicit CompileThreadsGuard(int threads) { SetCompileThreadsForTesting(threads); }
  ~CompileThreadsGuard() { SetCompileThreadsForTesting(0); }
  CompileThreadsGuard(const CompileThreadsGuard&) = delete;
  CompileThreadsGuard& operator=(const CompileThreadsGuard&) = delete;
};

TEST(VulkanParallelCompile, EveryTaskRunsOnceOnAnyThreadCount) {
  for (const int threads : {0, 1, 3, 8, 64}) {
    std::vector<std::atomic<int>> runs(37);
    const Status status = RunCompileTasks(runs.size(), threads, [&](size_t i) {
      runs[i].fetch_add(1);
      return OkStatus();
    });
    EXPECT_TRUE(status.ok()) << status.ToString();
    for (size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << "task " << i << ", " << threads;
  }
  EXPECT_TRUE(RunCompileTasks(0, 4, [](size_t) { return Internal("no task should run"); }).ok());
}

TEST(VulkanParallelCompile, TheLowestFailingTaskIsReportedAndEveryTaskStillRuns) {
  for (const int threads : {1, 4}) {
    std::atomic<int> ran{0};
    const Status status = RunCompileTasks(20, threads, [&](size_t i) -> Status {
      ran.fetch_add(1);
      if (i == 17 || i == 5 || i == 11) return InvalidArgument("task ", i, " failed");
      return OkStatus();
    });
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
    EXPECT_EQ(status.message(), "task 5 failed") << threads << " threads";
    EXPECT_EQ(ran.load(), 20);
  }
}

TEST(VulkanParallelCompile, CompileThreadsFollowsTheTestingOverride) {
  {
    const CompileThreadsGuard guard(3);
    EXPECT_EQ(CompileThreads(), 3);
  }
  EXPECT_GE(CompileThreads(), 1);
  EXPECT_LE(CompileThreads(), 8);
}

TEST(VulkanParallelCompile, SpirvIsTheSerialCompilesWhateverTheThreads) {
  auto module = ParseHloModule(kManyKernels);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  ShaderFeatures lavapipe = AllShaderFeatures();
  lavapipe.max_loop_iterations = 65535;
  std::vector<std::vector<uint32_t>> serial;
  for (const int threads : {1, 4}) {
    const CompileThreadsGuard guard(threads);
    StatusOr<std::unique_ptr<VulkanProgram>> program = CompileForVulkan(
        **module, lavapipe, /*offset_alignment=*/256, /*optimization_level=*/2, "", "", nullptr);
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    const std::vector<CompiledShader>& shaders = (*program)->shaders;
    ASSERT_GE(shaders.size(), 3u) << "the module should make several kernels";
    ASSERT_EQ(shaders.size(), (*program)->kernels.size());
    if (threads == 1) {
      for (const CompiledShader& shader : shaders) serial.push_back(shader.spirv);
      continue;
    }
    ASSERT_EQ(shaders.size(), serial.size());
    for (size_t i = 0; i < shaders.size(); ++i)
      EXPECT_EQ(shaders[i].spirv, serial[i]) << "kernel " << (*program)->kernels[i].name;
  }
}

TEST(VulkanParallelCompile, PipelinesMadeSideBySideGiveTheInterpretersResults) {
  auto module = ParseHloModule(kManyKernels);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  std::vector<float> x(32 * 32), w(32 * 32);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(static_cast<int>(i % 13) - 6) / 16.0f;
    w[i] = static_cast<float>(static_cast<int>((i * 7) % 11) - 5) / 64.0f;
  }
  std::vector<Literal> arguments;
  arguments.push_back(Literal::FromVector<float>(x, {32, 32}));
  arguments.push_back(Literal::FromVector<float>(w, {32, 32}));
  const CompileThreadsGuard guard(4);
  ExpectVulkanAgreesWithInterpreter(**module, arguments, "many kernels on 4 compile threads");
}

// glslang's warm-up (run by a backend beside its first compile) may meet
// kernels being compiled on other threads: they still compile, and only
// they are counted as compilations.
TEST(VulkanParallelCompile, ShaderCompilerWarmUpRunsBesideCompilesUncounted) {
  constexpr std::string_view kDoubling = R"(#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Data { float values[]; };
void main() { values[gl_GlobalInvocationID.x] *= 2.0; }
)";
  const uint64_t before = GlslCompilationCount();
  std::vector<std::vector<uint32_t>> spirv(4);
  const Status status = RunCompileTasks(8, 8, [&](size_t i) -> Status {
    if (i % 2 == 0) {
      PrepareShaderCompiler();
      return OkStatus();
    }
    KILN_ASSIGN_OR_RETURN(spirv[i / 2], CompileGlslToSpirv(kDoubling, "doubling", FloatControls{}));
    return OkStatus();
  });
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(GlslCompilationCount() - before, 4u);
  for (const std::vector<uint32_t>& words : spirv) {
    ASSERT_FALSE(words.empty());
    EXPECT_EQ(words, spirv[0]);
  }
}

}  // namespace
}  // namespace kiln::vulkan
