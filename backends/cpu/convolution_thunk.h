// convolution (ConvGeneralDilated) on f32/f64: any dimension numbers,
// padding, strides, lhs/rhs dilation, window reversal, feature and batch
// groups. Output rows (batch x output positions) are cut into blocks; each
// thread gathers a block's input patches (im2col) into a local buffer and
// multiplies it with the packed kernel using Eigen's GEMM. f32 convolutions
// that oneDNN can express run on oneDNN's primitive instead when the build has
// it (see onednn_convolution.h); everything else keeps the Eigen path.
//
// Padding and lhs-dilation holes take part in the products as zeros
// (README, numerics: "a convolution's padding"), as the Eigen path's im2col
// patches hold them. oneDNN skips the padding instead, and Winograd's
// transforms mix a tile's weights, which differs only for an infinite or NaN
// weight: a padded (or possibly Winograd) convolution on oneDNN first looks
// for one, in one pass over the weights, and runs on the Eigen path where it
// finds one.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "backends/cpu/thunk.h"
#include "core/ir.h"

namespace kiln::cpu {

struct ConvolutionGeometry {
  ElementType type = ElementType::kF32;
  size_t spatial_rank = 0;
  std::vector<int64_t> in_spatial, kernel_spatial, out_spatial;
  std::vector<WindowDimension> window;
  int64_t out_batch = 0;
  int64_t feature_groups = 1, batch_groups = 1;
  int64_t kernel_in_features = 0;  // input features per group
  int64_t out_features = 0;        // all output features
  int64_t group_out_features = 0;  // output features per group
  // Strides in elements of the row-major operands.
  int64_t in_batch_stride = 0, in_feature_stride = 0;
  std::vector<int64_t> in_spatial_strides;
  int64_t kernel_in_stride = 0, kernel_out_stride = 0;
  std::vector<int64_t> kernel_spatial_strides;
  int64_t out_batch_stride = 0, out_feature_stride = 0;
  std::vector<int64_t> out_spatial_strides;
  // Derived sizes.
  int64_t rows = 0;              // out_batch * output positions
  int64_t kernel_positions = 1;  // product of kernel_spatial
  int64_t patch_columns = 0;     // kernel_positions * kernel_in_features
  // Output rows are evenly spaced `row_stride` apart with contiguous
  // features, so GEMM results can go straight to the output.
  bool direct_output = false;
  int64_t row_stride = 0;
  // Every operand's precision is the default (operand_precision absent or
  // all "default"): oneDNN may use Winograd's algorithm, whose rounding
  // error is a few times larger than a direct sum's.
  bool allow_winograd = false;

  int64_t groups() const { return feature_groups * batch_groups; }
  int64_t packed_kernel_elements() const { return groups() * patch_columns * group_out_features; }
};

// Geometry for `convolution`, or nothing when this thunk does not handle it.
std::optional<ConvolutionGeometry> PlanConvolution(const Instruction& convolution);

class OneDnnConvolution;

class ConvolutionThunk : public Thunk {
 public:
  // `packed_kernel` is a scratch slot of packed_kernel_elements() elements
  // (the Eigen path's packed kernel; the oneDNN path does not use it).
  ConvolutionThunk(int input, int kernel, int output, int packed_kernel, ConvolutionGeometry geometry);
  ~ConvolutionThunk() override;
  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return "convolution"; }
  // Whether Run goes through oneDNN (for weights that are all finite).
  bool uses_onednn() const { return onednn_ != nullptr; }
  // Whether Run looks for an infinite or NaN weight before it takes oneDNN.
  bool checks_weights_for_onednn() const { return onednn_checks_weights_; }

 private:
  ConvolutionGeometry geometry_;
  std::unique_ptr<OneDnnConvolution> onednn_;
  bool onednn_checks_weights_ = false;
};

}  // namespace kiln::cpu
