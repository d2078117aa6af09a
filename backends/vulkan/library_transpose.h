// When and how a kernel runs the library transpose (shaders/transpose.comp):
// a kernel that is one transpose of its one parameter and moves the minor
// dimension. Such a transpose read or written one element per invocation,
// as the elemental kernel does, strides through memory on one side; the
// library shader stages TILE x TILE tiles in shared memory so that both
// sides are read and written in rows. Transposes that keep the minor
// dimension (whole rows move) and transposes fused with other work stay
// elemental.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "backends/vulkan/library_shaders.h"
#include "backends/vulkan/shader_features.h"
#include "core/ir.h"

namespace kiln::vulkan {

// The push constants of shaders/transpose.comp (its TransposeShape block,
// word for word): the transpose with unit dimensions dropped and
// dimensions that stay neighbours merged, as a tiled plane of the input's
// dimension `a` (the output's minor one) by its minor dimension `b`, and up
// to kMaxOuter outer dimensions that choose the plane.
struct TransposeShape {
  static constexpr int kMaxOuter = 4;
  uint32_t extent_a = 1, extent_b = 1;
  uint32_t in_stride_a = 1, out_stride_b = 1;
  uint32_t outer_count = 0;
  std::array<uint32_t, kMaxOuter> outer_extent{1, 1, 1, 1};  // unused ones are 1
  std::array<uint32_t, kMaxOuter> outer_in_stride{};
  std::array<uint32_t, kMaxOuter> outer_out_stride{};

  std::vector<uint32_t> Words() const;
};

struct TransposePlan {
  LibraryShader shader = LibraryShader::kTranspose4;  // by element width
  uint32_t tile = 32;                                 // specialization constant 1: the tile's edge
  uint32_t rows = 8;  // specialization constant 2: tile rows per pass; tile * rows invocations a group
  TransposeShape shape;
  // One workgroup per tile: x along b, y along a, z the plane (each at
  // most the 65535 every device launches).
  std::array<int64_t, 3> workgroups{1, 1, 1};
  uint32_t workgroup_size() const { return tile * rows; }
};

// The plan for transposing an array of `dimensions` by `permutation`
// (output dimension i is input dimension permutation[i]) with elements of
// `element_bytes` (1, 2, 4, 8 or 16) on a device with `features`: tiles as
// large as its shared memory holds (32 at most on a GPU, 64 on a CPU
// device), workgroups within its limits and a multiple of its subgroup
// size where they can be. nullopt
// when the minor dimension stays minor, more than kMaxOuter other
// dimensions remain, the array has 2^32 elements or more, the tiles pass
// 65535 along a grid dimension, the width is another, or the device cannot
// store elements of that width.
std::optional<TransposePlan> PlanTranspose(const std::vector<int64_t>& dimensions,
                                           const std::vector<int64_t>& permutation, int element_bytes,
                                           const ShaderFeatures& features);

// PlanTranspose for a kernel whose root is a transpose of its only
// parameter; nullopt for every other kernel.
std::optional<TransposePlan> PlanKernelTranspose(const Computation& kernel, const ShaderFeatures& features);

}  // namespace kiln::vulkan
