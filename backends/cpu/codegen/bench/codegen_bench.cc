// Measures the code generator (a program, not a test): single-thread time of
// a fused tanh chain and a row sum, and compile times. Prints numbers only.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/cpu/codegen/kernel_compiler.h"
#include "core/hlo_parser.h"

namespace {

using Clock = std::chrono::steady_clock;

double Milliseconds(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Best of `repeats` single-thread runs over the whole parallel extent.
double BestRunMs(const kiln::cpu::KernelInfo& kernel, void* const* buffers, int repeats) {
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) {
    const auto start = Clock::now();
    kernel.function(buffers, 0, kernel.parallel_extent);
    best = std::min(best, Milliseconds(start));
  }
  return best;
}

std::unique_ptr<kiln::Module> Parse(const std::string& text) {
  auto module = kiln::ParseHloModule(text);
  if (!module.ok()) {
    std::fprintf(stderr, "%s\n", module.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(*module);
}

}  // namespace

// Optional argument: the optimisation level (0..3, default 3).
int main(int argc, char** argv) {
  kiln::cpu::KernelCompilerOptions options;
  if (argc > 1) options.optimization_level = std::atoi(argv[1]);
  auto created = kiln::cpu::KernelCompiler::Create(options);
  if (!created.ok()) return 1;
  kiln::cpu::KernelCompiler& compiler = **created;

  const int64_t n = 16 << 20;
  auto chain = Parse(R"(HloModule m
ENTRY e {
  x = f32[16777216] parameter(0)
  a = f32[] constant(0.5)
  b = f32[] constant(0.1)
  c = f32[] constant(2)
  ba = f32[16777216] broadcast(a), dimensions={}
  bb = f32[16777216] broadcast(b), dimensions={}
  bc = f32[16777216] broadcast(c), dimensions={}
  m = f32[16777216] multiply(x, ba)
  s = f32[16777216] add(m, bb)
  t = f32[16777216] tanh(s)
  u = f32[16777216] multiply(t, bc)
  ROOT r = f32[16777216] add(u, x)
})");
  kiln::KernelDescription request = kiln::DescribeKernel(*chain->entry(), "chain");
  auto start = Clock::now();
  auto compiled = compiler.Compile(std::span<const kiln::KernelDescription>(&request, 1));
  const double chain_compile_ms = Milliseconds(start);
  if (!compiled.ok()) return 1;
  std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i % 1000) * 0.004f - 2.0f;
  void* chain_buffers[] = {x.data(), y.data()};
  std::printf("fused tanh chain 16M f32, 1 thread: %.2f ms (%.1f GB/s); 5-op fusion compile %.1f ms\n",
              BestRunMs((*compiled)->kernels()[0], chain_buffers, 10),
              2.0 * 4 * static_cast<double>(n) / 1e6 / BestRunMs((*compiled)->kernels()[0], chain_buffers, 5),
              chain_compile_ms);

  auto rowsum = Parse(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4096,4096] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4096] reduce(x, z), dimensions={1}, to_apply=add
})");
  kiln::KernelDescription sum_request = kiln::DescribeKernel(*rowsum->entry(), "rowsum");
  auto sum = compiler.Compile(std::span<const kiln::KernelDescription>(&sum_request, 1));
  if (!sum.ok()) return 1;
  std::vector<float> matrix(4096u * 4096u, 1.0f), sums(4096);
  void* sum_buffers[] = {matrix.data(), sums.data()};
  const double sum_ms = BestRunMs((*sum)->kernels()[0], sum_buffers, 10);
  std::printf("row sum 4096x4096 f32, 1 thread: %.2f ms (%.1f GB/s), sum[0]=%g\n", sum_ms,
              4096.0 * 4096 * 4 / 1e6 / sum_ms, static_cast<double>(sums[0]));

  // 50 small kernels in one module.
  std::vector<std::unique_ptr<kiln::Module>> modules;
  std::vector<kiln::KernelDescription> requests;
  for (int i = 0; i < 50; ++i) {
    modules.push_back(
        Parse("HloModule m\nENTRY e {\n  x = f32[128," + std::to_string(64 + i) +
              "] parameter(0)\n  y = f32[128," + std::to_string(64 + i) + "] parameter(1)\n  m = f32[128," +
              std::to_string(64 + i) + "] multiply(x, y)\n  e = f32[128," + std::to_string(64 + i) +
              "] exponential(m)\n  ROOT r = f32[128," + std::to_string(64 + i) + "] add(e, x)\n}\n"));
    requests.push_back(kiln::DescribeKernel(*modules.back()->entry(), "k" + std::to_string(i)));
  }
  start = Clock::now();
  auto many = compiler.Compile(requests);
  std::printf("50-kernel module compile: %.1f ms (%s)\n", Milliseconds(start), many.ok() ? "ok" : "failed");
  return 0;
}
