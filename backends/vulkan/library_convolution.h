// When and how a kernel runs the library convolution
// (shaders/convolution.comp): a kernel that is one f32 (or f16, where the
// device stores 16-bit words) convolution of its two parameters with one or
// two spatial dimensions, any dimension numbers, window strides, padding,
// window dilation and feature groups, computed as an implicit GEMM with
// tiles of the im2col matrix and of the filter in shared memory. The
// elemental kernel reads the input once per output feature and window
// position; this reads each tile once per workgroup. Convolutions with base
// (lhs) dilation, window reversal, batch groups, more spatial dimensions or
// other types stay elemental.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "backends/vulkan/library_gemm_tiles.h"
#include "backends/vulkan/library_shaders.h"
#include "backends/vulkan/shader_features.h"
#include "core/ir.h"

namespace kiln::vulkan {

// The push constants of shaders/convolution.comp (its ConvolutionShape
// block, word for word); a 1-D convolution has spatial dimension 0 of
// extent 1. Negative low padding is stored as its two's complement.
struct ConvolutionShape {
  uint32_t batch = 1, channels = 1, out_features = 1, groups = 1;
  uint32_t in_size[2] = {1, 1}, out_size[2] = {1, 1}, window[2] = {1, 1}, stride[2] = {1, 1};
  int32_t pad_low[2] = {0, 0};
  uint32_t dilation[2] = {1, 1};
  uint32_t in_stride_batch = 0, in_stride_feature = 0, in_stride_spatial[2] = {0, 0};
  uint32_t filter_stride_in = 0, filter_stride_out = 0, filter_stride_spatial[2] = {0, 0};
  uint32_t out_stride_batch = 0, out_stride_feature = 0, out_stride_spatial[2] = {0, 0};

  std::vector<uint32_t> Words() const;
  // The implicit GEMM's extents.
  int64_t rows() const { return int64_t{batch} * out_size[0] * out_size[1]; }  // M
  int64_t depth() const { return int64_t{channels} * window[0] * window[1]; }  // K
};

struct ConvolutionPlan {
  LibraryShader shader = LibraryShader::kConvolutionF32;
  GemmTiles tiles;  // specialization constants 1..5
  ConvolutionShape shape;
  int64_t groups = 0;  // workgroups' worth of tiles: tiles of M x tiles of N x feature groups
  // Loop iterations one invocation runs per tile it takes (lavapipe's
  // limit), the shader's [[unroll]] loops unrolled.
  int64_t loops_per_tile() const;
};

// The plan for `convolution` (its operands the kernel's inputs, row-major)
// on a device with `features`; nullopt where the implicit GEMM view does
// not hold or the device's limits rule the tiles out.
std::optional<ConvolutionPlan> PlanConvolution(const Instruction& convolution,
                                               const ShaderFeatures& features);

// PlanConvolution for a kernel whose root is a convolution of its two
// parameters; nullopt for every other kernel.
std::optional<ConvolutionPlan> PlanKernelConvolution(const Computation& kernel,
                                                     const ShaderFeatures& features);

}  // namespace kiln::vulkan
