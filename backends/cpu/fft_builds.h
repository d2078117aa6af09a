// The builds of Kiln's FFT kernels (fft_transform.cc and the files it
// uses, each compiled once per instruction set into its own namespace; see
// fft_lanes.h and CMakeLists) and the one entry point of each. Which builds
// exist is the build's choice (KILN_CPU_FFT_AVX2, KILN_CPU_FFT_AVX512);
// fft_select.cc picks among them for the CPU it runs on.
#pragma once

#include <memory>

#include "backends/cpu/fft_transform.h"
#include "core/interpreter/fft.h"

namespace kiln::cpu::fft {

// 16 f32 (8 f64) lines per 512-bit register.
namespace avx512 {
std::unique_ptr<FftTransform> CreateTransform(const interpreter::FftGeometry& geometry);
}
// 8 f32 (4 f64) lines per 256-bit register.
namespace avx2 {
std::unique_ptr<FftTransform> CreateTransform(const interpreter::FftGeometry& geometry);
}
// 128-bit vectors, for builds without the x86 flags.
namespace baseline {
std::unique_ptr<FftTransform> CreateTransform(const interpreter::FftGeometry& geometry);
}

}  // namespace kiln::cpu::fft
