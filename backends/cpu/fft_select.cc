// FftTransform::Create: the widest build of the FFT's kernels (fft_builds.h)
// that both this library and the CPU it runs on have. Compiled without the
// kernels' instruction-set flags, so it runs anywhere.
#include "backends/cpu/fft_builds.h"

namespace kiln::cpu {
namespace {

struct FftBuild {
  const char* name;
  std::unique_ptr<FftTransform> (*create)(const interpreter::FftGeometry& geometry);
};

#if defined(KILN_CPU_FFT_AVX512)
bool HasAvx512ForFft() {
  static const bool has_avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  return has_avx512;
}
#endif

FftBuild SelectFftBuild([[maybe_unused]] FftKernels kernels) {
#if defined(KILN_CPU_FFT_AVX512)
  if (kernels == FftKernels::kWidest && HasAvx512ForFft()) return {"avx512", fft::avx512::CreateTransform};
#endif
#if defined(KILN_CPU_FFT_AVX2)
  return {"avx2", fft::avx2::CreateTransform};
#else
  return {"baseline", fft::baseline::CreateTransform};
#endif
}

}  // namespace

std::unique_ptr<FftTransform> FftTransform::Create(const interpreter::FftGeometry& geometry,
                                                   FftKernels kernels) {
  return SelectFftBuild(kernels).create(geometry);
}

const char* FftTransform::KernelsName(FftKernels kernels) { return SelectFftBuild(kernels).name; }

}  // namespace kiln::cpu
