// The grid the CPU backend gives each kernel description (CpuKernelGrid):
// the kernel's parallel extent in row blocks of about 64 KiB touched, one
// block per thread-pool task.
#include "backends/cpu/cpu_executable.h"
#include "backends/cpu/kernel_thunk.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

TEST(RuntimeKernelGridTest, EachDistinctKernelIsDescribedWithItsRowBlocks) {
  // One large elementwise kernel (split into many blocks) and one small
  // one (a single block).
  const char* text = R"(HloModule m
ENTRY e {
  x = f32[1024,256] parameter(0)
  w = f32[256,4] parameter(1)
  n = f32[1024,256] negate(x)
  d = f32[1024,4] dot(n, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f32[1024,4] tanh(d)
})";
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  CpuBackend cpu;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, CompileOptions()));
  const CompiledProgram& program = static_cast<const CpuExecutable&>(*executable).program();
  ASSERT_NE(program.kernels, nullptr);
  const std::vector<KernelInfo>& infos = program.kernels->kernels();
  ASSERT_EQ(program.kernel_descriptions.size(), infos.size());
  EXPECT_EQ(static_cast<int64_t>(infos.size()), program.statistics.distinct_kernels);
  bool split = false;
  for (size_t i = 0; i < infos.size(); ++i) {
    const KernelDescription& kernel = program.kernel_descriptions[i];
    SCOPED_TRACE(kernel.name);
    ASSERT_NE(kernel.computation, nullptr);
    EXPECT_EQ(kernel.arguments.size(), kernel.computation->parameters().size());
    EXPECT_EQ(kernel.grid.iterations, infos[i].parallel_extent);
    EXPECT_GE(kernel.grid.invocations(), kernel.grid.iterations);
    EXPECT_EQ(kernel.grid.workgroups[0] * kernel.grid.workgroup_size[0], kernel.grid.invocations());
    // A row block touches at least 64 KiB when the kernel says what an
    // iteration touches.
    if (infos[i].bytes_per_iteration > 0 && kernel.grid.workgroups[0] > 1) {
      EXPECT_GE(kernel.grid.workgroup_size[0] * infos[i].bytes_per_iteration, 64 * 1024);
    }
    split = split || kernel.grid.workgroups[0] > 1;
  }
  // The negation of 1 MiB is more than one block.
  EXPECT_TRUE(split);
  testing::ExpectMatchesInterpreter(text);
}

TEST(RuntimeKernelGridTest, CpuKernelGridIsOneBlockWhenTheKernelCannotSayWhatItTouches) {
  KernelInfo info;
  info.parallel_extent = 1000;
  info.bytes_per_iteration = 0;
  const KernelGrid whole = CpuKernelGrid(info);
  EXPECT_EQ(whole.iterations, 1000);
  EXPECT_EQ(whole.workgroups[0], 1);
  EXPECT_EQ(whole.workgroup_size[0], 1000);

  info.bytes_per_iteration = 1024;  // 64 rows make 64 KiB
  const KernelGrid rows = CpuKernelGrid(info);
  EXPECT_EQ(rows.workgroup_size[0], 64);
  EXPECT_EQ(rows.workgroups[0], 16);  // ceil(1000 / 64)
}

}  // namespace
}  // namespace kiln::cpu
