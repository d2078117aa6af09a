// Attributes of instructions: plain data, one struct for every op. Fields an
// op does not use keep their defaults; shape inference, the verifier, the HLO
// printer and the backends read only the fields that belong to the opcode.
// The large ones few opcodes use (window, the dimension numbers of
// convolution, dot, gather and scatter) are Boxed (core/boxed.h): one pointer
// in every instruction, allocated when written; read them with `->`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/boxed.h"

namespace kiln {

struct WindowDimension {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t window_dilation = 1;  // rhs_dilate
  int64_t base_dilation = 1;    // lhs_dilate
  bool window_reversal = false;
  bool operator==(const WindowDimension&) const = default;
};

struct Window {
  std::vector<WindowDimension> dimensions;
  bool operator==(const Window&) const = default;
};

struct PaddingDimension {
  int64_t low = 0;       // may be negative: removes elements
  int64_t high = 0;      // may be negative
  int64_t interior = 0;  // >= 0
  bool operator==(const PaddingDimension&) const = default;
};

struct ConvolutionDimensionNumbers {
  int64_t input_batch_dimension = 0;
  int64_t input_feature_dimension = 1;
  std::vector<int64_t> input_spatial_dimensions;
  int64_t kernel_input_feature_dimension = 1;
  int64_t kernel_output_feature_dimension = 0;
  std::vector<int64_t> kernel_spatial_dimensions;
  int64_t output_batch_dimension = 0;
  int64_t output_feature_dimension = 1;
  std::vector<int64_t> output_spatial_dimensions;
  bool operator==(const ConvolutionDimensionNumbers&) const = default;
};

struct DotDimensionNumbers {
  std::vector<int64_t> lhs_contracting_dimensions;
  std::vector<int64_t> rhs_contracting_dimensions;
  std::vector<int64_t> lhs_batch_dimensions;
  std::vector<int64_t> rhs_batch_dimensions;
  bool operator==(const DotDimensionNumbers&) const = default;
};

struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims;
  std::vector<int64_t> collapsed_slice_dims;
  std::vector<int64_t> start_index_map;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> start_indices_batching_dims;
  bool operator==(const GatherDimensionNumbers&) const = default;
};

struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
  bool operator==(const ScatterDimensionNumbers&) const = default;
};

enum class ComparisonDirection { kEq, kNe, kGe, kGt, kLe, kLt };
// kDefault: FLOAT for floats, SIGNED/UNSIGNED for integers (by element type).
enum class ComparisonType { kDefault, kFloat, kTotalOrder, kSigned, kUnsigned };
enum class RngDistribution { kUniform, kNormal };
enum class RngAlgorithm { kDefault, kThreeFry, kPhilox };
// What a fusion's kernel is built around (XLA's names): kLoop, an elementwise
// loop over the output; kInput, a reduction with its producers fused in;
// kOutput, a library op (dot, convolution) with its consumers fused in.
enum class FusionKind { kLoop, kInput, kOutput };

// XLA's precision config, one per operand of a dot or convolution. kDefault
// lets a backend pick a faster algorithm whose rounding differs a little
// from the textbook sum (XLA's GPU and TPU backends do); kHigh and kHighest
// ask for the plain full-precision one.
enum class OperandPrecision { kDefault, kHigh, kHighest };

// XLA's FftType: FFT and IFFT transform complex numbers (the inverse scaled
// by 1/N, as NumPy's ifft); RFFT takes real numbers to the first
// fft_length[-1]/2+1 entries of their spectrum along the last dimension;
// IRFFT takes such half spectra back to real numbers (scaled by 1/N).
enum class FftType { kFft, kIfft, kRfft, kIrfft };

struct Attributes {
  // broadcast (operand->output dim map), reduce, reverse, transpose
  // (permutation), concatenate ({dim}), map, sort ({dim}), reduce-precision
  // not used; get-dimension-size ({dim}).
  std::vector<int64_t> dimensions;

  // slice
  std::vector<int64_t> slice_starts, slice_limits, slice_strides;
  // dynamic-slice
  std::vector<int64_t> dynamic_slice_sizes;
  // pad
  std::vector<PaddingDimension> padding;
  // reduce-window, select-and-scatter, convolution
  Boxed<Window> window;
  // convolution
  Boxed<ConvolutionDimensionNumbers> conv;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  // dot
  Boxed<DotDimensionNumbers> dot;
  // dot, convolution: empty when not given (all kDefault)
  std::vector<OperandPrecision> operand_precision;
  // gather
  Boxed<GatherDimensionNumbers> gather;
  std::vector<int64_t> gather_slice_sizes;
  // scatter
  Boxed<ScatterDimensionNumbers> scatter;
  // gather and scatter hints
  bool indices_are_sorted = false;
  bool unique_indices = false;
  // compare
  ComparisonDirection comparison_direction = ComparisonDirection::kEq;
  ComparisonType comparison_type = ComparisonType::kDefault;
  // iota
  int64_t iota_dimension = 0;
  // get-tuple-element
  int64_t tuple_index = 0;
  // parameter
  int64_t parameter_number = 0;
  // batch-norm-*
  float epsilon = 0.0f;
  int64_t feature_index = 0;
  // reduce-precision
  int64_t exponent_bits = 0;
  int64_t mantissa_bits = 0;
  // sort
  bool is_stable = false;
  // topk: how many elements, and whether the largest (else smallest) ones
  int64_t top_k = 0;
  bool largest = true;
  // fft: the transform and the lengths of the operand's 1 to 3 trailing
  // dimensions it transforms (for IRFFT, the lengths of the real result's).
  FftType fft_type = FftType::kFft;
  std::vector<int64_t> fft_length;
  // rng, rng-bit-generator
  RngDistribution rng_distribution = RngDistribution::kUniform;
  RngAlgorithm rng_algorithm = RngAlgorithm::kDefault;
  // fusion
  FusionKind fusion_kind = FusionKind::kLoop;
  // custom-call
  std::string custom_call_target;
  bool custom_call_has_side_effect = false;
  // custom-call backend_config, infeed/outfeed config: opaque strings.
  std::string backend_config;
  std::string infeed_config;
  // send/recv
  int64_t channel_id = 0;

  bool operator==(const Attributes&) const = default;
};

}  // namespace kiln
