// When and how a kernel runs the library convolution
// (shaders/convolution.comp): a kernel that is one f32 (or f16, where the
// device stores 16-bit words) convolution of its two parameters with one,
// two or three spatial dimensions (NWC, NHWC, NDHWC or any other dimension
// numbers), window strides, padding, window and base (lhs) dilation,
// window reversal and feature groups, computed as an implicit GEMM with
// tiles of the im2col matrix and of the filter in shared memory. The
// elemental kernel reads the input once per output feature and window
// position; this reads each tile once per workgroup. Convolutions with
// batch groups, more spatial dimensions or other types stay elemental.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "backends/vulkan/library_gemm_tiles.h"
#include "backends/vulkan/library_shaders.h"
#include "backends/vulkan/shader_features.h"
#include "core/ir.h"

namespace kiln::vulkan {

// The geometry of a convolution in the shader's three spatial slots, slot
// 0 the outermost: a 2-D convolution leaves slot 0 of extent 1, a 1-D one
// slots 0 and 1. All but the window, its dilation and reversal and the
// base dilation are the push constants of shaders/convolution.comp (its
// ConvolutionShape block, word for word: Words()); those four are
// specialization constants (the plan's specialization()). Negative low
// padding is stored as its two's complement.
struct ConvolutionShape {
  static constexpr int kSlots = 3;
  uint32_t batch = 1, channels = 1, out_features = 1, groups = 1;
  uint32_t in_size[kSlots] = {1, 1, 1}, out_size[kSlots] = {1, 1, 1}, stride[kSlots] = {1, 1, 1};
  int32_t pad_low[kSlots] = {0, 0, 0};
  uint32_t in_stride_batch = 0, in_stride_feature = 0, in_stride_spatial[kSlots] = {0, 0, 0};
  uint32_t filter_stride_in = 0, filter_stride_out = 0, filter_stride_spatial[kSlots] = {0, 0, 0};
  uint32_t out_stride_batch = 0, out_stride_feature = 0, out_stride_spatial[kSlots] = {0, 0, 0};
  uint32_t window[kSlots] = {1, 1, 1}, dilation[kSlots] = {1, 1, 1}, base_dilation[kSlots] = {1, 1, 1};
  uint32_t reversed[kSlots] = {0, 0, 0};  // 1 where the window is reversed
  // The convolution's spatial dimensions (1 to 3).
  uint32_t spatial = 2;

  // The push constants.
  std::vector<uint32_t> Words() const;
  // The implicit GEMM's extents.
  int64_t rows() const { return int64_t{batch} * out_size[0] * out_size[1] * out_size[2]; }  // M
  int64_t depth() const { return int64_t{channels} * window[0] * window[1] * window[2]; }    // K
};

struct ConvolutionPlan {
  LibraryShader shader = LibraryShader::kConvolutionF32;
  GemmTiles tiles;  // specialization constants 1..5
  ConvolutionShape shape;
  int64_t groups = 0;  // workgroups' worth of tiles: tiles of M x tiles of N x feature groups
  // Specialization constants 1..18: the tiles, the window and its dilation
  // per slot, SPATIAL (3 where slot 0 is in use, else 2), the base
  // dilation per slot and the reversal per slot.
  std::vector<uint32_t> specialization() const;
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
