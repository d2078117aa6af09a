#include "backends/vulkan/library_shaders.h"

#include <map>
#include <mutex>
#include <span>
#include <string>
#include <tuple>

#include "backends/vulkan/shader_compiler.h"
#include "backends/vulkan/shaders/bitonic_sort_16.h"
#include "backends/vulkan/shaders/bitonic_sort_32.h"
#include "backends/vulkan/shaders/bitonic_sort_64.h"
#include "backends/vulkan/shaders/bitonic_sort_8.h"
#include "backends/vulkan/shaders/bitonic_sort_passenger_16.h"
#include "backends/vulkan/shaders/bitonic_sort_passenger_32.h"
#include "backends/vulkan/shaders/bitonic_sort_passenger_64.h"
#include "backends/vulkan/shaders/bitonic_sort_passenger_8.h"
#include "backends/vulkan/shaders/convolution_f16.h"
#include "backends/vulkan/shaders/convolution_f32.h"
#include "backends/vulkan/shaders/scatter_add_f32.h"
#include "backends/vulkan/shaders/scatter_add_i32.h"
#include "backends/vulkan/shaders/tiled_dot.h"
#include "backends/vulkan/shaders/transpose_1.h"
#include "backends/vulkan/shaders/transpose_16.h"
#include "backends/vulkan/shaders/transpose_2.h"
#include "backends/vulkan/shaders/transpose_4.h"
#include "backends/vulkan/shaders/transpose_8.h"

namespace kiln::vulkan {
namespace {

struct EmbeddedShader {
  std::string_view name;
  std::span<const uint32_t> words;
};

// One row per LibraryShader, in its order.
EmbeddedShader Embedded(LibraryShader shader) {
  switch (shader) {
    case LibraryShader::kTranspose1: return {"transpose_1", kTranspose1Spirv};
    case LibraryShader::kTranspose2: return {"transpose_2", kTranspose2Spirv};
    case LibraryShader::kTranspose4: return {"transpose_4", kTranspose4Spirv};
    case LibraryShader::kTranspose8: return {"transpose_8", kTranspose8Spirv};
    case LibraryShader::kTranspose16: return {"transpose_16", kTranspose16Spirv};
    case LibraryShader::kConvolutionF32: return {"convolution_f32", kConvolutionF32Spirv};
    case LibraryShader::kConvolutionF16: return {"convolution_f16", kConvolutionF16Spirv};
    case LibraryShader::kTiledDot: return {"tiled_dot", kTiledDotSpirv};
    case LibraryShader::kBitonicSort8: return {"bitonic_sort_8", kBitonicSort8Spirv};
    case LibraryShader::kBitonicSort16: return {"bitonic_sort_16", kBitonicSort16Spirv};
    case LibraryShader::kBitonicSort32: return {"bitonic_sort_32", kBitonicSort32Spirv};
    case LibraryShader::kBitonicSort64: return {"bitonic_sort_64", kBitonicSort64Spirv};
    case LibraryShader::kBitonicSortPassenger8:
      return {"bitonic_sort_passenger_8", kBitonicSortPassenger8Spirv};
    case LibraryShader::kBitonicSortPassenger16:
      return {"bitonic_sort_passenger_16", kBitonicSortPassenger16Spirv};
    case LibraryShader::kBitonicSortPassenger32:
      return {"bitonic_sort_passenger_32", kBitonicSortPassenger32Spirv};
    case LibraryShader::kBitonicSortPassenger64:
      return {"bitonic_sort_passenger_64", kBitonicSortPassenger64Spirv};
    case LibraryShader::kScatterAddF32: return {"scatter_add_f32", kScatterAddF32Spirv};
    case LibraryShader::kScatterAddI32: return {"scatter_add_i32", kScatterAddI32Spirv};
  }
  return {"unknown", {}};
}

}  // namespace

std::string_view LibraryShaderName(LibraryShader shader) { return Embedded(shader).name; }

std::vector<uint32_t> EmbeddedLibraryShader(LibraryShader shader) {
  const std::span<const uint32_t> words = Embedded(shader).words;
  return std::vector<uint32_t>(words.begin(), words.end());
}

StatusOr<std::vector<uint32_t>> LibraryShaderSpirv(LibraryShader shader,
                                                   const FloatControls& float_controls) {
  using Key = std::tuple<LibraryShader, bool, bool, bool, bool, bool, bool>;
  static std::mutex mutex;
  static std::map<Key, std::vector<uint32_t>> ready;
  const FloatWidths& nan = float_controls.preserve_nan_inf_signed_zero;
  const FloatWidths& denormals = float_controls.preserve_denormals;
  const Key key{shader, nan.f16, nan.f32, nan.f64, denormals.f16, denormals.f32, denormals.f64};
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (auto found = ready.find(key); found != ready.end()) return found->second;
  }
  const std::string name(LibraryShaderName(shader));
  KILN_ASSIGN_OR_RETURN(std::vector<uint32_t> words,
                        FinishSpirv(EmbeddedLibraryShader(shader), "library shader " + name, float_controls,
                                    "(shaders/" + name + ", compiled by glslc at build time)"));
  const std::lock_guard<std::mutex> lock(mutex);
  return ready.emplace(key, std::move(words)).first->second;
}

}  // namespace kiln::vulkan
