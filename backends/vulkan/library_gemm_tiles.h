// The tiles of the library shaders that multiply matrices in shared memory
// (the convolution's implicit GEMM, library_convolution.h, and the dot,
// library_dot.h), chosen from the device's limits.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "backends/vulkan/shader_features.h"

namespace kiln::vulkan {

// Specialization constants 1..5 of such a shader: output rows and columns
// a workgroup, contraction steps a shared tile, rows and columns an
// invocation; (bm / tm) * (bn / tn) invocations a workgroup.
struct GemmTiles {
  uint32_t bm = 64, bn = 64, bk = 8, tm = 4, tn = 4;
  uint32_t workgroup_size() const { return (bm / tm) * (bn / tn); }
  std::vector<uint32_t> specialization() const { return {bm, bn, bk, tm, tn}; }
};

// The tiles for products with `columns` output columns (a convolution
// group's output features, a dot's N) on a device with `features`: its
// shared memory, invocations and subgroup size; nullopt where none fits.
std::optional<GemmTiles> ChooseGemmTiles(int64_t columns, const ShaderFeatures& features);

}  // namespace kiln::vulkan
