// When and how a kernel runs the library dot (shaders/tiled_dot.comp): a
// kernel that is one f32 dot of its two parameters with one contracting
// and one free dimension a side, up to four batch dimensions and m, n and
// k each at least 32 (smaller dots gain little from tiles and stay
// elemental). The elemental dot reads each operand element M or N times
// from memory; this reads it M/BM or N/BN times.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "backends/vulkan/library_gemm_tiles.h"
#include "backends/vulkan/shader_features.h"
#include "core/ir.h"

namespace kiln::vulkan {

// The push constants of shaders/tiled_dot.comp (its DotShape block, word
// for word): the dot's extents, each operand's strides (row-major) and its
// batch dimensions in the output's order.
struct DotShape {
  static constexpr int kMaxBatch = 4;
  uint32_t m = 0, n = 0, k = 0;
  uint32_t lhs_m_stride = 0, lhs_k_stride = 0;
  uint32_t rhs_n_stride = 0, rhs_k_stride = 0;
  uint32_t batch = 1;
  std::array<uint32_t, kMaxBatch> batch_extent{1, 1, 1, 1};  // unused ones are 1
  std::array<uint32_t, kMaxBatch> lhs_batch_stride{};
  std::array<uint32_t, kMaxBatch> rhs_batch_stride{};

  std::vector<uint32_t> Words() const;
};

struct DotPlan {
  GemmTiles tiles;
  // Specialization constants 6 and 7: loads follow the contraction in the
  // left operand, the columns in the right one, where those are contiguous.
  bool lhs_along_k = true;
  bool rhs_along_n = true;
  DotShape shape;
  int64_t groups = 0;  // tiles of M x tiles of N x batch
  // The tiles (0-5), the two load orders (6, 7), then the shape's m, n, k
  // and four strides (8-14): a pipeline per dot shape.
  std::vector<uint32_t> specialization() const;
  // Loop iterations one invocation runs per tile it takes (lavapipe's
  // limit), the shader's [[unroll]] loops unrolled.
  int64_t loops_per_tile() const;
};

// The plan for `dot` on a device with `features`; nullopt for every other
// dot (other types, several contracting or free dimensions, more batch
// dimensions, small extents, arrays of 2^32 elements or more).
std::optional<DotPlan> PlanDot(const Instruction& dot, const ShaderFeatures& features);

// PlanDot for a kernel whose root is a dot of its two parameters; nullopt
// for every other kernel.
std::optional<DotPlan> PlanKernelDot(const Computation& kernel, const ShaderFeatures& features);

}  // namespace kiln::vulkan
