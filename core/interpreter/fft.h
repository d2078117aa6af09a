// XLA's fft op on dense row-major arrays: FFT, IFFT, RFFT and IRFFT over the
// 1 to 3 trailing dimensions named by fft_length, the inverses scaled by 1/N
// as NumPy's. Each transformed dimension is a batch of one-dimensional
// transforms through Eigen's FFT module (unsupported/Eigen/FFT, its kissfft
// backend: any length, mixed radix 2, 3, 4, 5 and a generic butterfly for
// larger prime factors, so a length with a large prime factor p costs about
// n*p instead of n*log n); the real transforms use its real-input forward
// and half-spectrum inverse along the last dimension. The interpreter's
// kernel; the cpu backend shares PlanFft's geometry and runs its own FFT
// (backends/cpu/fft_transform.h).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/attributes.h"
#include "core/shape.h"
#include "core/status.h"

namespace kiln::interpreter {

// One fft instruction's work: `batch` independent transforms (the product of
// the leading, untransformed dimensions) of the trailing `lengths`.
struct FftGeometry {
  FftType type = FftType::kFft;
  bool double_precision = false;  // f64/c128, else f32/c64
  int64_t batch = 0;
  std::vector<int64_t> lengths;  // fft_length: the complex (FFT/IFFT) or real (RFFT/IRFFT) side's
};

// The longest transformed dimension the library takes.
inline constexpr int64_t kMaxFftLength = (int64_t{1} << 30) - 1;

// The geometry of an fft from `operand` to `result` (verified shapes), or
// an error naming what does not fit: inconsistent shapes, or a length above
// kMaxFftLength (UNIMPLEMENTED).
StatusOr<FftGeometry> PlanFft(const Shape& operand, const Shape& result, const Attributes& attrs);

// Calls `body(begin, end)` on disjoint ranges covering [0, extent), each at
// least `grain` long except the last, and returns when all are done.
using FftParallelFor =
    std::function<void(int64_t extent, int64_t grain, const std::function<void(int64_t, int64_t)>& body)>;

// Transforms `input` (the operand's elements) into `output` (the result's);
// the two must not overlap. Without `parallel_for` it runs on the calling
// thread. Each thread keeps the library's plans (twiddle factors per length)
// for later calls.
void RunFft(const FftGeometry& geometry, const void* input, void* output,
            const FftParallelFor& parallel_for = nullptr);

}  // namespace kiln::interpreter
