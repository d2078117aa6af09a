// FP32 fused multiply-add peak: every thread keeps twelve independent chains
// of FMAs in flight (enough to cover FMA latency times FMA pipes on current
// x86 cores), so the loop is bound by FMA throughput alone. The chains are
// 16-wide where the CPU has AVX-512 (libraries such as oneDNN use it, and on
// cores with full-width 512-bit pipes it doubles the peak), else 8-wide.
#include <immintrin.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "benchmarks/machine/machine_options.h"
#include "benchmarks/machine/worker_team.h"

namespace kiln::bench {
namespace {

constexpr int kChains = 12;
constexpr int kLanes256 = 8;
constexpr int kLanes512 = 16;
constexpr long kIterations = 50'000'000;  // about 0.1 s per thread at 3 GHz
constexpr int kDefaultRepetitions = 7;

// `multiplier` and `addend` come from memory the compiler cannot see into, so
// the chains cannot be folded; the result is returned so they are not dead.
__attribute__((target("avx2,fma"), noinline)) float FmaChains(const volatile float* multiplier,
                                                              const volatile float* addend, long iterations) {
  const __m256 x = _mm256_set1_ps(*multiplier);
  const __m256 y = _mm256_set1_ps(*addend);
  __m256 chain[kChains];
  for (int k = 0; k < kChains; ++k) chain[k] = _mm256_set1_ps(static_cast<float>(k) * 1e-3f);
  for (long i = 0; i < iterations; ++i) {
    for (int k = 0; k < kChains; ++k) chain[k] = _mm256_fmadd_ps(chain[k], x, y);
  }
  __m256 total = chain[0];
  for (int k = 1; k < kChains; ++k) total = _mm256_add_ps(total, chain[k]);
  alignas(32) float lanes[kLanes256];
  _mm256_store_ps(lanes, total);
  return lanes[0];
}

__attribute__((target("avx512f"), noinline)) float FmaChains512(const volatile float* multiplier,
                                                                const volatile float* addend,
                                                                long iterations) {
  const __m512 x = _mm512_set1_ps(*multiplier);
  const __m512 y = _mm512_set1_ps(*addend);
  __m512 chain[kChains];
  for (int k = 0; k < kChains; ++k) chain[k] = _mm512_set1_ps(static_cast<float>(k) * 1e-3f);
  for (long i = 0; i < iterations; ++i) {
    for (int k = 0; k < kChains; ++k) chain[k] = _mm512_fmadd_ps(chain[k], x, y);
  }
  __m512 total = chain[0];
  for (int k = 1; k < kChains; ++k) total = _mm512_add_ps(total, chain[k]);
  alignas(64) float lanes[kLanes512];
  _mm512_store_ps(lanes, total);
  return lanes[0];
}

}  // namespace
}  // namespace kiln::bench

int main(int argc, char** argv) {
  using namespace kiln::bench;
  MachineOptions options;
  const std::string error = ParseMachineOptions(argc, argv, &options);
  if (!error.empty()) {
    std::fprintf(stderr, "kiln_fma_peak: %s\n", error.c_str());
    return 2;
  }
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    std::fprintf(stderr, "kiln_fma_peak: needs an x86-64 CPU with AVX2 and FMA\n");
    return 1;
  }
  const bool wide = __builtin_cpu_supports("avx512f");
  const int lanes = wide ? kLanes512 : kLanes256;
  auto chains = wide ? FmaChains512 : FmaChains;
  const int repetitions = options.repetitions > 0 ? options.repetitions : kDefaultRepetitions;
  static volatile float multiplier = 0.999999f, addend = 1e-7f;
  for (int threads : options.thread_counts) {
    WorkerTeam team(threads);
    std::vector<float> sinks(static_cast<size_t>(threads));
    auto round = [&] {
      team.Run([&](int m) { sinks[static_cast<size_t>(m)] += chains(&multiplier, &addend, kIterations); });
    };
    round();  // warm-up: clocks ramp, threads settle
    std::vector<double> seconds;
    for (int r = 0; r < repetitions; ++r) {
      const auto start = std::chrono::steady_clock::now();
      round();
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    float checksum = 0;
    for (float s : sinks) checksum += s;
    if (checksum == -1.0f) std::puts("");
    const TimeSummary summary = Summarize(seconds);
    const double flops = 2.0 * lanes * kChains * static_cast<double>(kIterations) * threads;
    const double best = flops / summary.best / 1e9, median = flops / summary.median / 1e9;
    if (options.json) {
      std::printf(
          "{\"threads\": %d, \"repetitions\": %d, \"vector_lanes\": %d, \"best_gflops\": %.2f, "
          "\"median_gflops\": %.2f, \"best_gflops_per_thread\": %.2f}\n",
          threads, repetitions, lanes, best, median, best / threads);
    } else {
      std::printf("threads %d: FP32 FMA peak %.1f GFLOP/s (median %.1f), %.1f per thread, %d-wide\n", threads,
                  best, median, best / threads, lanes);
    }
  }
  return 0;
}
