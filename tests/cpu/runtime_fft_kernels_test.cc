// Kiln's FFT kernels (backends/cpu/fft_transform.h) called directly, in
// each build this host runs: the widest (AVX-512 where the CPU has it) and
// the fallback (AVX2), on 1, 2 and 4 threads, against the naive DFT. The
// cases reach every path of both builds: full vectors of rows copied in and
// out a square tile at a time with a tail of single elements, partly filled
// vectors and single lines (batches that are not a multiple of 16 or 8
// lanes), columns, radix 4, 2, 3, 5 and larger prime passes, Bluestein's
// algorithm, the real transforms of even length (half-length complex lines)
// and of odd length, and a long line transformed as a matrix. A NaN or an
// infinity stays in its own transform, whichever lanes it shares.
#include <cmath>
#include <cstring>
#include <limits>
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
    for (FftType type : fft_reference::kEveryFftType) {
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
    for (FftType type : fft_reference::kEveryFftType) {
      for (bool f64 : {false, true}) CheckEveryBuildAndThreadCount({type, f64, {3}, lengths});
    }
  }
  for (FftType type : fft_reference::kEveryFftType) {
    for (bool f64 : {false, true}) CheckEveryBuildAndThreadCount({type, f64, {2}, {6, 10, 18}});
  }
}

TEST(RuntimeFftKernelsTest, LongLinesMatchTheNaiveDft) {
  // One line of 4096 points: a 64 x 64 matrix (four-step).
  for (FftType type : {FftType::kFft, FftType::kIfft}) {
    for (bool f64 : {false, true}) CheckEveryBuildAndThreadCount({type, f64, {1}, {4096}});
  }
}

// Sets element `i` of a real or complex operand (the real part for complex).
void SetReal(Literal& operand, int64_t i, double value) {
  const auto at = static_cast<size_t>(i);
  switch (operand.shape().element_type()) {
    case ElementType::kF32: operand.data<float>()[at] = static_cast<float>(value); return;
    case ElementType::kF64: operand.data<double>()[at] = value; return;
    case ElementType::kC64: operand.data<complex64>()[at].real(static_cast<float>(value)); return;
    case ElementType::kC128: operand.data<complex128>()[at].real(value); return;
    default: FAIL() << "not an fft operand: " << operand.shape().ToString();
  }
}

// Element `i` of a result as a complex double.
std::complex<double> ElementOf(const Literal& result, int64_t i) {
  const auto at = static_cast<size_t>(i);
  switch (result.shape().element_type()) {
    case ElementType::kF32: return result.data<float>()[at];
    case ElementType::kF64: return result.data<double>()[at];
    case ElementType::kC64: return result.data<complex64>()[at];
    case ElementType::kC128: return result.data<complex128>()[at];
    default: ADD_FAILURE() << "not an fft result: " << result.shape().ToString(); return {};
  }
}

TEST(RuntimeFftKernelsTest, NanAndInfinityStayInTheirOwnTransform) {
  // 37 transforms, the lanes of a vector shared by up to 16 of them; a NaN
  // goes into transform 5 and an infinity into transform 20. Each of their
  // results is non-finite; every other transform's is the same, bit for
  // bit, as without them.
  constexpr int64_t kBatch = 37, kWithNan = 5, kWithInfinity = 20;
  for (const std::vector<int64_t>& lengths : std::vector<std::vector<int64_t>>{{64}, {30}, {6, 20}}) {
    for (FftType type : fft_reference::kEveryFftType) {
      for (bool f64 : {false, true}) {
        const FftCase c{type, f64, {kBatch}, lengths};
        SCOPED_TRACE(fft_reference::CaseName(c));
        std::vector<int64_t> in_dims{kBatch}, out_dims{kBatch};
        in_dims.insert(in_dims.end(), lengths.begin(), lengths.end());
        out_dims.insert(out_dims.end(), lengths.begin(), lengths.end());
        if (type == FftType::kIrfft) in_dims.back() = lengths.back() / 2 + 1;
        if (type == FftType::kRfft) out_dims.back() = lengths.back() / 2 + 1;
        const ElementType real_type = f64 ? ElementType::kF64 : ElementType::kF32;
        const ElementType complex_type = f64 ? ElementType::kC128 : ElementType::kC64;
        Literal clean(Shape(type == FftType::kRfft ? real_type : complex_type, in_dims));
        const Shape out_shape(type == FftType::kIrfft ? real_type : complex_type, out_dims);
        uint64_t state = 99;
        for (int64_t i = 0; i < clean.element_count(); ++i)
          SetReal(clean, i, fft_reference::NextValue(state));
        const int64_t in_size = clean.element_count() / kBatch;
        const int64_t out_size = out_shape.element_count() / kBatch;
        Literal poisoned = clean;
        SetReal(poisoned, kWithNan * in_size + 3, std::numeric_limits<double>::quiet_NaN());
        SetReal(poisoned, kWithInfinity * in_size, std::numeric_limits<double>::infinity());
        for (FftKernels kernels : {FftKernels::kWidest, FftKernels::kFallback}) {
          for (int threads : {1, 2}) {
            SCOPED_TRACE(std::string(FftTransform::KernelsName(kernels)) + ", threads " +
                         std::to_string(threads));
            const Literal want = RunKernels(c, kernels, ParallelForOn(threads), clean, out_shape);
            const Literal got = RunKernels(c, kernels, ParallelForOn(threads), poisoned, out_shape);
            int64_t finite_in_poisoned = 0, changed_elsewhere = 0;
            for (int64_t b = 0; b < kBatch; ++b) {
              for (int64_t i = b * out_size; i < (b + 1) * out_size; ++i) {
                const std::complex<double> value = ElementOf(got, i);
                const std::complex<double> clean_value = ElementOf(want, i);
                if (b == kWithNan || b == kWithInfinity) {
                  if (std::isfinite(value.real()) && std::isfinite(value.imag())) ++finite_in_poisoned;
                } else if (std::memcmp(&value, &clean_value, sizeof(value)) != 0) {
                  ++changed_elsewhere;
                }
              }
            }
            EXPECT_EQ(finite_in_poisoned, 0);
            EXPECT_EQ(changed_elsewhere, 0);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace kiln::cpu
