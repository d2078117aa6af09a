// The width the CPU backend vectorises its kernels at. LLVM tunes several
// AVX-512 cores (Skylake-SP to Sapphire Rapids) to vectorise 8 floats wide;
// Kiln asks for 16 wherever the host has AVX-512F (backends/cpu/codegen/
// jit.cc), read here from the optimised IR that CompileOptions::dump_ir_dir
// writes.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu::testing {
namespace {

// tanh of a large f32 array: the `elementwise` benchmark's kernel, large
// enough to be built in the optimised tier.
constexpr char kTanhKernel[] = R"(
HloModule vector_width_tanh

ENTRY main {
  x = f32[1048576] parameter(0)
  half = f32[] constant(0.5)
  halves = f32[1048576] broadcast(half), dimensions={}
  scaled = f32[1048576] multiply(x, halves)
  ROOT t = f32[1048576] tanh(scaled)
}
)";

// Every *.optimized.ll file under `directory`, concatenated.
std::string OptimizedIr(const std::filesystem::path& directory) {
  std::string text;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(directory)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || name.find(".optimized.ll") == std::string::npos) continue;
    std::ifstream file(entry.path());
    std::stringstream content;
    content << file.rdbuf();
    text += content.str();
  }
  return text;
}

TEST(RuntimeVectorWidthTest, KernelsAreVectorisedSixteenFloatsWideOnAvx512Hosts) {
  if (!__builtin_cpu_supports("avx512f")) {
    GTEST_SKIP() << "this host has no AVX-512F: kernels keep the CPU's own preferred width";
  }
  const std::filesystem::path directory =
      std::filesystem::temp_directory_path() / ("kiln_vector_width_" + std::to_string(getpid()));
  std::filesystem::remove_all(directory);
  std::unique_ptr<Module> module = ParseOrDie(kTanhKernel);
  ASSERT_NE(module, nullptr);
  CpuBackend cpu;
  CompileOptions options;
  options.dump_ir_dir = directory.string();
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, options));
  const std::string ir = OptimizedIr(directory);
  std::filesystem::remove_all(directory);
  ASSERT_FALSE(ir.empty()) << "no optimised IR was dumped under " << directory;
  EXPECT_NE(ir.find("\"prefer-vector-width\"=\"512\""), std::string::npos) << ir;
  EXPECT_NE(ir.find("<16 x float>"), std::string::npos) << "the tanh loop is not 16 floats wide:\n" << ir;
}

}  // namespace
}  // namespace kiln::cpu::testing
