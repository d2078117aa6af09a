// The width the CPU backend vectorises its kernels at. LLVM tunes several
// AVX-512 cores (Skylake-SP to Sapphire Rapids) to vectorise 8 floats wide;
// Kiln asks for 16 wherever the host has AVX-512F (backends/cpu/codegen/
// jit.cc), except in row reductions that only stream memory, which ask for
// 8 (backends/llvm/row_reduction_plan.h); read here from the optimised IR
// that CompileOptions::dump_ir_dir writes.
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

// Sums over the last axis of f32[4096,1024] of `unary`(x), or of x itself
// when `unary` is empty.
std::string RowSumModule(const std::string& unary) {
  const std::string rows = unary.empty() ? "x" : "e";
  return "HloModule vector_width_row_sum\n\n"
         "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT sum = f32[] add(a, b)\n}\n\n"
         "ENTRY main {\n  x = f32[4096,1024] parameter(0)\n" +
         (unary.empty() ? "" : "  e = f32[4096,1024] " + unary + "(x)\n") +
         "  zero = f32[] constant(0)\n  ROOT rows = f32[4096] reduce(" + rows +
         ", zero), dimensions={1}, to_apply=add\n}\n";
}

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

// The optimised IR of `text` compiled for cpu.
std::string CompiledIr(const std::string& text) {
  const std::filesystem::path directory =
      std::filesystem::temp_directory_path() / ("kiln_vector_width_" + std::to_string(getpid()));
  std::filesystem::remove_all(directory);
  std::unique_ptr<Module> module = ParseOrDie(text);
  if (module == nullptr) return "";
  CpuBackend cpu;
  CompileOptions options;
  options.dump_ir_dir = directory.string();
  StatusOr<std::unique_ptr<Executable>> executable = cpu.Compile(*module, options);
  EXPECT_TRUE(executable.ok()) << executable.status().ToString();
  std::string ir = OptimizedIr(directory);
  std::filesystem::remove_all(directory);
  EXPECT_FALSE(ir.empty()) << "no optimised IR was dumped under " << directory;
  return ir;
}

TEST(RuntimeVectorWidthTest, KernelsAreVectorisedSixteenFloatsWideOnAvx512Hosts) {
  if (!__builtin_cpu_supports("avx512f")) {
    GTEST_SKIP() << "this host has no AVX-512F: kernels keep the CPU's own preferred width";
  }
  const std::string ir = CompiledIr(kTanhKernel);
  EXPECT_NE(ir.find("\"prefer-vector-width\"=\"512\""), std::string::npos) << ir;
  EXPECT_NE(ir.find("<16 x float>"), std::string::npos) << "the tanh loop is not 16 floats wide:\n" << ir;
}

TEST(RuntimeVectorWidthTest, RowReductionsThatOnlyStreamMemoryAreEightFloatsWide) {
  if (!__builtin_cpu_supports("avx512f")) {
    GTEST_SKIP() << "this host has no AVX-512F: kernels keep the CPU's own preferred width";
  }
  const std::string ir = CompiledIr(RowSumModule(""));  // a row reduction that only streams memory
  EXPECT_NE(ir.find("\"prefer-vector-width\"=\"256\""), std::string::npos) << ir;
  EXPECT_EQ(ir.find("\"prefer-vector-width\"=\"512\""), std::string::npos) << ir;
  EXPECT_NE(ir.find("<8 x float>"), std::string::npos) << "the row sum is not 8 floats wide:\n" << ir;
  EXPECT_EQ(ir.find("<16 x float>"), std::string::npos) << "the row sum is 16 floats wide:\n" << ir;
}

TEST(RuntimeVectorWidthTest, RowReductionsOfTranscendentalsStaySixteenFloatsWide) {
  if (!__builtin_cpu_supports("avx512f")) {
    GTEST_SKIP() << "this host has no AVX-512F: kernels keep the CPU's own preferred width";
  }
  const std::string ir = CompiledIr(RowSumModule("exponential"));  // compute-bound
  EXPECT_NE(ir.find("\"prefer-vector-width\"=\"512\""), std::string::npos) << ir;
  EXPECT_NE(ir.find("<16 x float>"), std::string::npos) << "the sum of exp is not 16 floats wide:\n" << ir;
}

}  // namespace
}  // namespace kiln::cpu::testing
