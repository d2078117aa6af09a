// fft as cuFFT transforms. An HLO fft of 1 to 3 transformed dimensions, the
// innermost of a dense row-major array (the rest batched), is one cuFFT
// plan of cufftMakePlanMany: C2C/Z2Z for FFT and IFFT of c64/c128, R2C/D2Z
// for RFFT of f32/f64, C2R/Z2D for IRFFT. Anything else (another layout,
// an empty array, a size past cuFFT's int) keeps the shared device
// expansion.
//
// cuFFT's inverse is not scaled and XLA's is (by 1/N), so the CUDA passes
// (CufftCalls) replace each fft cuFFT takes with a custom call of
// kCufftCallTarget, the transform as cuFFT computes it, and multiply an
// inverse's result by 1/N in ops of the module, which fuse into a kernel
// with their consumers: no kernel of the library's own.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "backends/cuda/cufft_api.h"
#include "core/ir.h"
#include "core/pass.h"
#include "core/status.h"

namespace kiln::cuda {

// The custom call that is one cuFFT transform: its attributes are the
// fft's (fft_type, fft_length), its inverse unscaled. Only CufftCalls makes
// it, after the module was checked, so a user's module never holds it.
inline constexpr std::string_view kCufftCallTarget = "kiln$cufft";

// The arguments of one cufftMakePlanMany call and how to run the plan.
struct CufftTransform {
  cufftType type = CUFFT_C2C;
  int direction = CUFFT_FORWARD;  // C2C and Z2Z only
  int rank = 1;
  std::array<int, 3> n = {0, 0, 0};        // the transform's logical sizes
  std::array<int, 3> inembed = {0, 0, 0};  // the input's stored sizes
  std::array<int, 3> onembed = {0, 0, 0};  // the output's
  int idist = 0, odist = 0;                // elements between batches
  int batch = 1;
  // C2R and Z2D overwrite their input, which may be the caller's buffer:
  // they run on a copy of `input_bytes` bytes.
  bool overwrites_input = false;
  int64_t input_bytes = 0;

  bool operator==(const CufftTransform&) const = default;
  std::string ToString() const;  // for errors and test messages
};

// The cuFFT transform of `fft` (an fft instruction or a kCufftCallTarget
// custom call), or UNIMPLEMENTED saying why cuFFT does not take it.
StatusOr<CufftTransform> PlanCufftTransform(const Instruction& fft);

// Replaces every fft PlanCufftTransform takes with a kCufftCallTarget
// custom call, followed for IFFT and IRFFT by the multiply by 1/N
// (N = the product of fft_length) in the result's real type. Runs before
// the device expansion, which then leaves only the others.
class CufftCalls : public Pass {
 public:
  std::string_view name() const override { return "cufft-calls"; }
  StatusOr<bool> Run(Module& module) override;
};

// Whether `instruction` is a custom call CufftCalls made.
bool IsCufftCall(const Instruction& instruction);

}  // namespace kiln::cuda
