// A dot computed by workgroups that share tiles of its operands: each group
// of kGlslWorkgroupSize invocations computes a 64 x 64 block of the output,
// each invocation an 8 x 8 sub-block held in registers, while the group walks
// the contraction 8 at a time through two 64 x 8 tiles in shared memory. The
// element-per-invocation dot reads each operand element M or N times from
// memory; this reads it M/64 or N/64 times and does 64 multiply-adds per
// 16 shared-memory reads.
//
// Sums run in the contraction's order, as the elemental dot's and the
// interpreter's do, so the results are the same numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ir.h"

namespace kiln::vulkan {

// Where a dot's operands and result live, read off its dimension numbers:
// one contracting dimension, one free dimension on each side, any batch
// dimensions; every operand row-major with the strides below.
struct TiledDotPlan {
  struct BatchDimension {
    int64_t extent, lhs_stride, rhs_stride;
  };
  std::vector<BatchDimension> batch_dimensions;  // in the output's order
  int64_t batch = 1, m = 0, n = 0, k = 0;
  int64_t lhs_m_stride = 0, lhs_k_stride = 0;
  int64_t rhs_n_stride = 0, rhs_k_stride = 0;
  int64_t tiles_m = 0, tiles_n = 0;
  int64_t invocations = 0;  // batch * tiles_m * tiles_n groups of kGlslWorkgroupSize
};

// The plan for an f32 dot large enough to gain from tiles (m, n and k each at
// least 32); nullopt for every other dot, which stays elemental.
std::optional<TiledDotPlan> PlanTiledDot(const Instruction& dot);

// Shared-memory declarations the kernel's globals carry.
std::string TiledDotGlobals();

// The grid-stride loop's body (indented for it): invocation k_i computes its
// part of tile k_i / kGlslWorkgroupSize, reading buffers b<lhs> and b<rhs>
// and writing b<out>. Every invocation of a group runs the same trips, so
// the barriers are reached uniformly.
std::string TiledDotBody(const TiledDotPlan& plan, int lhs, int rhs, int out);

// Loop trips one invocation runs per tile (what lavapipe's limit counts):
// the body is straight-line code apart from the contraction loop.
int64_t TiledDotLoopTrips(const TiledDotPlan& plan);

}  // namespace kiln::vulkan
