// Kiln's FFT kernels (backends/cpu/fft_transform.h) called directly, in
// each build this host runs: the widest (AVX-512 where the CPU has it) and
// the fallback (AVX2), on 1, 2 and 4 threads, against the naive DFT. The
// cases reach every path of both builds: full vectors of rows copied in and
// out a square tile at a time with a tail of single elements, partly filled
// vectors and single lines (batches that are not a multiple of 16 or 8
// lanes), columns, radix 4, 2, 3, 5 and larger prime passes, Bluestein's
// algorithm, the real transforms of even length (half-length complex lines)
// and of odd length, and a long line transformed as a matrix.
#include <memory>
#include <numeric>
#include <string>

#include "backends/cpu/fft_transform.h"
#include "backends/cpu/thread_pool.h"
#include "tests/unit/fft_reference.h"

namespace kiln::cpu {
namespace {

using fft_reference::CheckAgainstNaiveDft;
using fft_reference::FftCase;

constexpr FftType kEveryType[] = {FftType::kFft, FftType::kIfft, FftType::kRfft, FftType::kIrfft};

// The intra-op threads of a case run on `threads` threads (none for one,
// as the thunk passes none); the pools are made once.
interpreter::FftParallelFor ParallelForOn(int threads) {
  static const IntraOpThreadPool two(2), four(4);
  if (threads == 1) return nullptr;
  const IntraOpThreadPool& pool = threads == 2 ? two : four;
  return [&pool](int64_t extent, int64_t grain, const std::function<void(int64_t, int64_t)>& body) {
    pool.ParallelFor(extent, grain, body);
  };
}

// The case's transform by the `kernels` build, called directly.
Literal RunKernels(const FftCase& c, FftKernels kernels, const interpreter::FftParallelFor& parallel_for,
                   const Literal& operand, const Shape& result_shape) {
  interpreter::FftGeometry geometry;
  geometry.type = c.type;
  geometry.double_precision = c.f64;
  geometry.batch = std::accumulate(c.batch.begin(), c.batch.end(), int64_t{1}, std::multiplies<>());
  geometry.lengths = c.lengths;
  Literal result(result_shape);
  FftTransform::Create(geometry, kernels)->Run(operand.raw().data(), result.raw().data(), parallel_for);
  return result;
}

// Checks `c` on each build of the kernels and each thread count.
void CheckEveryBuildAndThreadCount(const FftCase& c) {
  std::vector<fft_reference::NamedFftRun> runs;
  for (FftKernels kernels : {FftKernels::kWidest, FftKernels::kFallback}) {
    for (int threads : {1, 2, 4}) {
      const interpreter::FftParallelFor parallel_for = ParallelForOn(threads);
      runs.push_back(
          {std::string(FftTransform::KernelsName(kernels)) + ", threads " + std::to_string(threads),
           [&c, kernels, parallel_for](const Literal& operand, const Shape& result_shape) {
             return StatusOr<Literal>(RunKernels(c, kernels, parallel_for, operand, result_shape));
           }});
    }
  }
  CheckAgainstNaiveDft(c, runs);
}

TEST(RuntimeFftKernelsTest, TheWidestBuildIsTheCpusWidest) {
  // The dispatch itself: where the library has the x86 builds (its fallback
  // is AVX2), a CPU with AVX-512 must run the AVX-512 build, else the tests
  // below would check the AVX2 build twice; elsewhere both are the same.
  const std::string fallback = FftTransform::KernelsName(FftKernels::kFallback);
  bool avx512 = false;
#if defined(__x86_64__)
  avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
#endif
  EXPECT_EQ(FftTransform::KernelsName(FftKernels::kWidest),
            fallback == "avx2" && avx512 ? "avx512" : fallback);
}

TEST(RuntimeFftKernelsTest, RowsMatchTheNaiveDft) {
  // 37 lines: f32, two full vectors of 16 lines and five single lines
  // (AVX-512), or four of 8 and a partly filled one (AVX2); f64, four of 8
  // and a partly filled one, or nine of 4 and a single line; and 1 line.
  // Lengths: 1; radix 2, 3, 5 and 8 alone; 2 x 3 x 5 (30), 8 x 5 (40),
  // 8 x 8 (64), 8 x 4 x 4 (128), 8 x 8 x 4 x 4 (1024); a direct prime
  // pass (61) and Bluestein's (67). 3, 5, 30 and 61 leave a tail after the
  // square tiles of the rows' copies; the real transforms halve the even
  // lengths.
  for (int64_t n : {1, 2, 3, 5, 8, 30, 40, 61, 64, 67, 128, 1024}) {
    for (FftType type : kEveryType) {
      for (bool f64 : {false, true}) {
        CheckEveryBuildAndThreadCount({type, f64, {37}, {n}});
        if (n <= 8) CheckEveryBuildAndThreadCount({type, f64, {1}, {n}});
      }
    }
  }
}

TEST(RuntimeFftKernelsTest, TwoAndThreeDimensionsMatchTheNaiveDft) {
  // Columns of 20 and 37 (a full vector and a partial or single ones).
  for (const std::vector<int64_t>& lengths : std::vector<std::vector<int64_t>>{{12, 20}, {6, 37}, {64, 32}}) {
    for (FftType type : kEveryType) {
      for (bool f64 : {false, true}) CheckEveryBuildAndThreadCount({type, f64, {3}, lengths});
    }
  }
  for (FftType type : kEveryType) {
    for (bool f64 : {false, true}) CheckEveryBuildAndThreadCount({type, f64, {2}, {6, 10, 18}});
  }
}

TEST(RuntimeFftKernelsTest, LongLinesMatchTheNaiveDft) {
  // One line of 4096 points: a 64 x 64 matrix (four-step).
  for (FftType type : {FftType::kFft, FftType::kIfft}) {
    for (bool f64 : {false, true}) CheckEveryBuildAndThreadCount({type, f64, {1}, {4096}});
  }
}

}  // namespace
}  // namespace kiln::cpu
