// STREAM-like memory bandwidth: copy (c = a), triad (a = b + s*c) and a
// read-only sum, by default over arrays far larger than the last-level cache,
// on 1 and N pinned threads. --array-mib sets the array size, so that a
// workload's rate can be compared with the machine's at the same footprint
// (a 16 MiB softmax input partly stays in a 32 MiB L3; a 256 MiB array does
// not). Bytes are counted as STREAM counts them (copy 8, triad 12,
// read 4 per float; write-allocate traffic not included), which is also how
// benchmarks/compare counts a workload's useful traffic.
#include <immintrin.h>
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "benchmarks/machine/machine_options.h"
#include "benchmarks/machine/worker_team.h"

namespace kiln::bench {
namespace {

// 256 MiB per array by default, 8x a 32 MiB L3.
constexpr long kDefaultArrayMib = 256;
constexpr long kGranule = 64;  // floats; keeps every slice 256-byte aligned
constexpr int kDefaultRepetitions = 10;

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using Array = std::unique_ptr<float[], FreeDeleter>;

// 2 MiB aligned and backed by transparent huge pages where the kernel allows
// them (Kiln's buffers are too): with 4 KiB pages the hardware prefetchers
// stop at every page boundary, and this machine's copy rate halves.
constexpr size_t kHugePageBytes = 2UL << 20;

Array AllocateArray(long elements) {
  const size_t bytes = (elements * sizeof(float) + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  void* block = std::aligned_alloc(kHugePageBytes, bytes);
  if (block != nullptr) madvise(block, bytes, MADV_HUGEPAGE);
  return Array(static_cast<float*>(block));
}

__attribute__((target("avx2"))) void Copy(const float* __restrict a, float* __restrict c, Slice s) {
  for (long i = s.begin; i < s.end; ++i) c[i] = a[i];
}

__attribute__((target("avx2,fma"))) void Triad(float* __restrict a, const float* __restrict b,
                                               const float* __restrict c, float scalar, Slice s) {
  for (long i = s.begin; i < s.end; ++i) a[i] = b[i] + scalar * c[i];
}

// The same loops with 64-byte vectors, where the CPU has AVX-512: a store
// that fills a whole cache line lets some cores skip reading the line first,
// and Kiln's kernels store whole lines there too.
__attribute__((target("avx512f"))) void Copy512(const float* __restrict a, float* __restrict c, Slice s) {
  for (long i = s.begin; i < s.end; i += 16) _mm512_store_ps(c + i, _mm512_load_ps(a + i));
}

__attribute__((target("avx512f"))) void Triad512(float* __restrict a, const float* __restrict b,
                                                 const float* __restrict c, float scalar, Slice s) {
  const __m512 factor = _mm512_set1_ps(scalar);
  for (long i = s.begin; i < s.end; i += 16)
    _mm512_store_ps(a + i, _mm512_fmadd_ps(factor, _mm512_load_ps(c + i), _mm512_load_ps(b + i)));
}

// Four independent vector sums so that add latency does not bound the loop.
__attribute__((target("avx2"))) float ReadSum(const float* a, Slice s) {
  __m256 sum0 = _mm256_setzero_ps(), sum1 = sum0, sum2 = sum0, sum3 = sum0;
  for (long i = s.begin; i < s.end; i += 32) {
    sum0 = _mm256_add_ps(sum0, _mm256_load_ps(a + i));
    sum1 = _mm256_add_ps(sum1, _mm256_load_ps(a + i + 8));
    sum2 = _mm256_add_ps(sum2, _mm256_load_ps(a + i + 16));
    sum3 = _mm256_add_ps(sum3, _mm256_load_ps(a + i + 24));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, _mm256_add_ps(_mm256_add_ps(sum0, sum1), _mm256_add_ps(sum2, sum3)));
  float total = 0;
  for (float lane : lanes) total += lane;
  return total;
}

__attribute__((target("avx512f"))) float ReadSum512(const float* a, Slice s) {
  __m512 sum0 = _mm512_setzero_ps(), sum1 = sum0, sum2 = sum0, sum3 = sum0;
  for (long i = s.begin; i < s.end; i += 64) {
    sum0 = _mm512_add_ps(sum0, _mm512_load_ps(a + i));
    sum1 = _mm512_add_ps(sum1, _mm512_load_ps(a + i + 16));
    sum2 = _mm512_add_ps(sum2, _mm512_load_ps(a + i + 32));
    sum3 = _mm512_add_ps(sum3, _mm512_load_ps(a + i + 48));
  }
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, _mm512_add_ps(_mm512_add_ps(sum0, sum1), _mm512_add_ps(sum2, sum3)));
  float total = 0;
  for (float lane : lanes) total += lane;
  return total;
}

struct Rates {
  TimeSummary copy, triad, read;
};

Rates Measure(long elements, int threads, int repetitions, float* a, float* b, float* c) {
  WorkerTeam team(threads);
  auto slice = [&](int member) { return SliceOf(elements, kGranule, member, team.size()); };
  const bool wide = __builtin_cpu_supports("avx512f");
  // First touch by the member that will use each slice, as an OpenMP static
  // schedule would place the pages.
  team.Run([&](int member) {
    const Slice s = slice(member);
    for (long i = s.begin; i < s.end; ++i) {
      a[i] = 1.0f;
      b[i] = 2.0f;
      c[i] = 0.0f;
    }
  });
  std::vector<float> sums(static_cast<size_t>(team.size()));
  std::vector<double> copy, triad, read;
  auto time = [&](const std::function<void(int)>& job) {
    const auto start = std::chrono::steady_clock::now();
    team.Run(job);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  // Each kernel's repetitions run back to back, as a benchmarked workload's
  // calls do: whatever part of the arrays the last-level cache keeps between
  // passes counts the same for the machine and for the workload.
  for (int r = 0; r < repetitions; ++r) {
    copy.push_back(time([&](int m) { wide ? Copy512(a, c, slice(m)) : Copy(a, c, slice(m)); }));
  }
  for (int r = 0; r < repetitions; ++r) {
    triad.push_back(
        time([&](int m) { wide ? Triad512(a, b, c, 3.0f, slice(m)) : Triad(a, b, c, 3.0f, slice(m)); }));
  }
  for (int r = 0; r < repetitions; ++r) {
    read.push_back(time([&](int m) {
      sums[static_cast<size_t>(m)] += wide ? ReadSum512(b, slice(m)) : ReadSum(b, slice(m));
    }));
  }
  float checksum = 0;
  for (float s : sums) checksum += s;
  if (checksum == -1.0f) std::puts("");  // keeps the sums observable
  return {Summarize(copy), Summarize(triad), Summarize(read)};
}

}  // namespace
}  // namespace kiln::bench

int main(int argc, char** argv) {
  using namespace kiln::bench;
  MachineOptions options;
  const std::string error = ParseMachineOptions(argc, argv, &options);
  if (!error.empty()) {
    std::fprintf(stderr, "kiln_memory_bandwidth: %s\n", error.c_str());
    return 2;
  }
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    std::fprintf(stderr, "kiln_memory_bandwidth: needs an x86-64 CPU with AVX2 and FMA\n");
    return 1;
  }
  const int repetitions = options.repetitions > 0 ? options.repetitions : kDefaultRepetitions;
  const long array_mib = options.array_mib > 0 ? options.array_mib : kDefaultArrayMib;
  const long elements = (array_mib << 20) / static_cast<long>(sizeof(float));
  Array a = AllocateArray(elements), b = AllocateArray(elements), c = AllocateArray(elements);
  if (!a || !b || !c) {
    std::fprintf(stderr, "kiln_memory_bandwidth: cannot allocate 3 x %ld MiB\n", array_mib);
    return 1;
  }
  for (int threads : options.thread_counts) {
    const Rates rates = Measure(elements, threads, repetitions, a.get(), b.get(), c.get());
    const double floats = static_cast<double>(elements);
    auto gbps = [&](double bytes_per_float, double seconds) {
      return bytes_per_float * floats / seconds / 1e9;
    };
    const double copy_best = gbps(8, rates.copy.best), copy_median = gbps(8, rates.copy.median);
    const double triad_best = gbps(12, rates.triad.best), triad_median = gbps(12, rates.triad.median);
    const double read_best = gbps(4, rates.read.best), read_median = gbps(4, rates.read.median);
    if (options.json) {
      std::printf(
          "{\"threads\": %d, \"array_mib\": %ld, \"repetitions\": %d, "
          "\"copy\": {\"best_gbps\": %.2f, \"median_gbps\": %.2f}, "
          "\"triad\": {\"best_gbps\": %.2f, \"median_gbps\": %.2f}, "
          "\"read\": {\"best_gbps\": %.2f, \"median_gbps\": %.2f}}\n",
          threads, array_mib, repetitions, copy_best, copy_median, triad_best, triad_median, read_best,
          read_median);
    } else {
      std::printf(
          "threads %d: copy %.1f GB/s (median %.1f), triad %.1f GB/s (median %.1f), read %.1f GB/s "
          "(median %.1f)\n",
          threads, copy_best, copy_median, triad_best, triad_median, read_best, read_median);
    }
  }
  return 0;
}
