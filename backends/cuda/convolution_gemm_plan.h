// A convolution as an implicit GEMM (convolution_gemm_emitter.h): for each
// group (a feature group, or a batch group), C[m, n] = sum_k A[m, k] * B[k, n]
// where
//   m = (output batch, output spatial positions, row-major)   M of them
//   n = the group's output features                            N of them
//   k = (window position, row-major; the group's input feature)   K of them,
//       the feature fastest or (window_minor_depth) the window position
// A (im2col of the input) and B (the filter) are never materialised: the
// kernel reads them through the arrays' strides, which the dimension
// numbers give (any layout of batch, feature and spatial dimensions over
// dense row-major buffers). Padding (negative too), window strides, window
// and base dilation and window reversal are in each spatial dimension's
// input position, exactly as the elemental path computes it.
//
// What the plan refuses keeps the elemental path (one thread per output
// element): element types other than f32, f16 and bf16 (the sum is f32
// whatever the operand types, as XLA's GPU backend does), empty arrays,
// and anything llvm_ir::CheckConvolutionEmittable refuses.
#pragma once

#include <cstdint>
#include <vector>

#include "core/element_type.h"
#include "core/ir.h"
#include "core/status.h"

namespace kiln::cuda {

// The tile each block computes (kConvolutionTileM x kConvolutionTileN of
// C, kConvolutionTileK deep per step through shared memory) and the
// register block of each of its kConvolutionThreads threads.
inline constexpr int64_t kConvolutionTileM = 64;
inline constexpr int64_t kConvolutionTileN = 64;
inline constexpr int64_t kConvolutionTileK = 8;
inline constexpr int64_t kConvolutionThreadM = 4;
inline constexpr int64_t kConvolutionThreadN = 4;
inline constexpr int64_t kConvolutionThreads =
    (kConvolutionTileM / kConvolutionThreadM) * (kConvolutionTileN / kConvolutionThreadN);

// One spatial dimension of the GEMM view.
struct ConvolutionGemmSpatial {
  int64_t input_extent = 1;   // the input's size along it
  int64_t output_extent = 1;  // the output's
  int64_t window_size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t window_dilation = 1;
  int64_t base_dilation = 1;
  bool window_reversal = false;
  // Elements between neighbours along it, in the input, filter and output.
  int64_t input_stride = 0;
  int64_t kernel_stride = 0;
  int64_t output_stride = 0;
};

struct ConvolutionGemmPlan {
  ElementType input_type = ElementType::kF32;
  ElementType kernel_type = ElementType::kF32;
  ElementType output_type = ElementType::kF32;
  int64_t groups = 1;  // feature_group_count * batch_group_count
  int64_t m = 0;
  int64_t n = 0;  // output features per group
  int64_t k = 0;  // group_input_features * window_elements
  int64_t group_input_features = 0;
  int64_t window_elements = 1;
  int64_t output_batch = 0;
  int64_t output_spatial_elements = 1;  // product of the output's spatial extents
  // Element strides of the non-spatial dimensions.
  int64_t input_batch_stride = 0;
  int64_t input_feature_stride = 0;
  int64_t kernel_input_feature_stride = 0;
  int64_t kernel_output_feature_stride = 0;
  int64_t output_batch_stride = 0;
  int64_t output_feature_stride = 0;
  // Elements from group g's input to group g + 1's: its input features
  // (feature groups) or its batch (batch groups).
  int64_t input_group_stride = 0;
  std::vector<ConvolutionGemmSpatial> spatial;  // in the dimension numbers' order
  // Whether a warp stages the A tile along k (the input's features are
  // contiguous: NHWC-like) rather than along m (NCHW-like), so that its
  // reads are runs of neighbouring elements.
  bool stage_input_along_k = false;
  // Whether k runs the window positions fastest (k = feature * window +
  // position) rather than the input features (k = position * features +
  // feature): chosen where the input is staged along m and it makes the
  // filter contiguous along k (NCHW-like filters: (out, in, spatial...)).
  bool window_minor_depth = false;
  // Whether a warp stages the B tile along k (the filter is contiguous
  // along k and not along its output features) rather than along n.
  bool stage_filter_along_k = false;

  int64_t m_tiles() const { return (m + kConvolutionTileM - 1) / kConvolutionTileM; }
  int64_t n_tiles() const { return (n + kConvolutionTileN - 1) / kConvolutionTileN; }
  // Blocks of kConvolutionThreads: one per (group, m tile, n tile).
  int64_t blocks() const { return groups * m_tiles() * n_tiles(); }
};

// The GEMM view of `convolution`, or UNIMPLEMENTED saying why it keeps the
// elemental path.
StatusOr<ConvolutionGemmPlan> PlanConvolutionGemm(const Instruction& convolution);

}  // namespace kiln::cuda
