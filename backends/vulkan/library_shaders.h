// The Vulkan backend's library shaders: hand-written GLSL under shaders/,
// compiled by glslc at build time and embedded as SPIR-V words (one variant
// per set of preprocessor defines). A kernel that one of them computes
// (library_kernels.h) runs it instead of GLSL generated at run time, with
// its workgroup size and tiles as specialization constants chosen from the
// device's limits and its shapes and strides as push constants.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "backends/vulkan/spirv_float_controls.h"
#include "core/status.h"

namespace kiln::vulkan {

enum class LibraryShader {
  // shaders/transpose.comp, per element width in bytes.
  kTranspose1,
  kTranspose2,
  kTranspose4,
  kTranspose8,
  kTranspose16,
  // shaders/convolution.comp, f32 and f16 arrays (f32 accumulation).
  kConvolutionF32,
  kConvolutionF16,
  // shaders/tiled_dot.comp, f32.
  kTiledDot,
  // shaders/bitonic_sort.comp, per key width in bits, alone or with one
  // passenger array.
  kBitonicSort8,
  kBitonicSort16,
  kBitonicSort32,
  kBitonicSort64,
  kBitonicSortPassenger8,
  kBitonicSortPassenger16,
  kBitonicSortPassenger32,
  kBitonicSortPassenger64,
  // shaders/scatter_add.comp: f32 (float atomics) and 32-bit integers.
  kScatterAddF32,
  kScatterAddI32,
};

// The variant's name, as "transpose_4" (messages, dumps).
std::string_view LibraryShaderName(LibraryShader shader);

// The variant's words as glslc made them.
std::vector<uint32_t> EmbeddedLibraryShader(LibraryShader shader);

// The variant's words made ready like a generated kernel's (FinishSpirv:
// float controls for `float_controls`, validated, optimised, validated again),
// once per process for each variant and widths. INTERNAL, naming the
// variant, when a step refuses them. Thread-safe.
StatusOr<std::vector<uint32_t>> LibraryShaderSpirv(LibraryShader shader, const FloatControls& float_controls);

}  // namespace kiln::vulkan
