// The derivative rule of convolution (both operands; any dimension numbers,
// feature or batch groups, strides, padding, base and window dilation), as
// JAX's transpose rules of conv_general_dilated: the input's cotangent is a
// convolution of the result's cotangent with the reversed kernel, its
// input and output features swapped and the strides turned into base
// dilation; the kernel's is a convolution of the input with the result's
// cotangent, batch and features swapped and the strides turned into window
// dilation.
#include <algorithm>

#include "core/autodiff/rule_helpers.h"
#include "core/autodiff/vjp_rules.h"

namespace kiln::autodiff {
namespace {

// Size of `size` elements with `dilation - 1` holes between neighbours.
// Splits dimension `dimension` of `x` into (parts, size / parts), parts major.
Instruction* SplitDimension(VjpEmitter& e, Instruction* x, int64_t dimension, int64_t parts) {
  std::vector<int64_t> dimensions = x->shape.dimensions();
  const auto at = static_cast<size_t>(dimension);
  const int64_t size = dimensions[at];
  dimensions[at] = size / parts;
  dimensions.insert(dimensions.begin() + dimension, parts);
  return e.Reshape(x, std::move(dimensions));
}

// Moves dimension `source` of `x` in front of `target` (numbered as if
// `source` were gone) and merges the two, `source` major.
Instruction* MergeDimension(VjpEmitter& e, Instruction* x, int64_t source, int64_t target) {
  std::vector<int64_t> permutation;
  for (int64_t d = 0; d < x->shape.rank(); ++d) {
    if (d != source) permutation.push_back(d);
  }
  permutation.insert(permutation.begin() + target, source);
  std::vector<int64_t> dimensions = x->shape.dimensions();
  const int64_t parts = dimensions[static_cast<size_t>(source)];
  dimensions.erase(dimensions.begin() + source);
  dimensions[static_cast<size_t>(target)] *= parts;
  return e.Reshape(e.Transpose(x, std::move(permutation)), std::move(dimensions));
}

// The input's cotangent.
Instruction* InputCotangent(VjpEmitter& e, const Instruction& conv, Instruction* g) {
  const ConvolutionDimensionNumbers& dn = conv.attrs.conv;
  const Instruction* input = conv.operand(0);
  Instruction* kernel = conv.operand(1);
  int64_t groups = conv.attrs.feature_group_count;
  const int64_t batch_groups = conv.attrs.batch_group_count;
  if (groups > 1 || batch_groups > 1) {
    // Each group's output features become the backward kernel's input
    // features; the groups move into its output features.
    const int64_t parts = groups > 1 ? groups : batch_groups;
    kernel = MergeDimension(e, SplitDimension(e, kernel, dn.kernel_output_feature_dimension, parts),
                            dn.kernel_output_feature_dimension, dn.kernel_input_feature_dimension);
    groups = parts;
  }
  Attributes attrs;
  attrs.operand_precision = conv.attrs.operand_precision;
  attrs.feature_group_count = groups;
  ConvolutionDimensionNumbers& back = *attrs.conv;
  back.input_batch_dimension = dn.output_batch_dimension;
  back.input_feature_dimension = dn.output_feature_dimension;
  back.input_spatial_dimensions = dn.output_spatial_dimensions;
  back.kernel_input_feature_dimension = dn.kernel_output_feature_dimension;
  back.kernel_output_feature_dimension = dn.kernel_input_feature_dimension;
  back.kernel_spatial_dimensions = dn.kernel_spatial_dimensions;
  back.output_batch_dimension = dn.input_batch_dimension;
  back.output_feature_dimension = dn.input_feature_dimension;
  back.output_spatial_dimensions = dn.input_spatial_dimensions;
  for (size_t i = 0; i < dn.input_spatial_dimensions.size(); ++i) {
    const WindowDimension& w = conv.attrs.window->dimensions[i];
    const int64_t input_size =
        Dilated(input->shape.dimensions(dn.input_spatial_dimensions[i]), w.base_dilation);
    const int64_t window_size = Dilated(w.size, w.window_dilation);
    const int64_t output_size = Dilated(conv.shape.dimensions(dn.output_spatial_dimensions[i]), w.stride);
    WindowDimension& b = attrs.window->dimensions.emplace_back();
    b.size = w.size;
    b.stride = w.base_dilation;
    b.base_dilation = w.stride;
    b.window_dilation = w.window_dilation;
    b.padding_low = window_size - w.padding_low - 1;
    b.padding_high = input_size + window_size - 1 - output_size - b.padding_low;
  }
  Attributes reverse;
  reverse.dimensions = dn.kernel_spatial_dimensions;
  std::sort(reverse.dimensions.begin(), reverse.dimensions.end());
  Instruction* reversed = e.Add(Opcode::kReverse, {kernel}, std::move(reverse));
  Instruction* result =
      e.Add(Opcode::kConvolution, {e.Convert(g, kernel->shape.element_type()), reversed}, std::move(attrs));
  if (batch_groups > 1) {
    // The groups come back out of the features into the batch.
    result = MergeDimension(e, SplitDimension(e, result, dn.input_feature_dimension, batch_groups),
                            dn.input_feature_dimension, dn.input_batch_dimension);
  }
  return e.Convert(result, input->shape.element_type());
}

// The kernel's cotangent.
Instruction* KernelCotangent(VjpEmitter& e, const Instruction& conv, Instruction* g) {
  const ConvolutionDimensionNumbers& dn = conv.attrs.conv;
  Instruction* input = conv.operand(0);
  const Instruction* kernel = conv.operand(1);
  Attributes attrs;
  attrs.operand_precision = conv.attrs.operand_precision;
  // Feature groups become batch groups and the other way round.
  attrs.feature_group_count = conv.attrs.batch_group_count;
  attrs.batch_group_count = conv.attrs.feature_group_count;
  ConvolutionDimensionNumbers& back = *attrs.conv;
  back.input_batch_dimension = dn.input_feature_dimension;
  back.input_feature_dimension = dn.input_batch_dimension;
  back.input_spatial_dimensions = dn.input_spatial_dimensions;
  back.kernel_input_feature_dimension = dn.output_batch_dimension;
  back.kernel_output_feature_dimension = dn.output_feature_dimension;
  back.kernel_spatial_dimensions = dn.output_spatial_dimensions;
  back.output_batch_dimension = dn.kernel_input_feature_dimension;
  back.output_feature_dimension = dn.kernel_output_feature_dimension;
  back.output_spatial_dimensions = dn.kernel_spatial_dimensions;
  for (size_t i = 0; i < dn.input_spatial_dimensions.size(); ++i) {
    const WindowDimension& w = conv.attrs.window->dimensions[i];
    const int64_t input_size =
        Dilated(input->shape.dimensions(dn.input_spatial_dimensions[i]), w.base_dilation);
    const int64_t window_size = Dilated(w.size, w.window_dilation);
    const int64_t output_size = conv.shape.dimensions(dn.output_spatial_dimensions[i]);
    WindowDimension& b = attrs.window->dimensions.emplace_back();
    b.size = output_size;
    b.stride = w.window_dilation;
    b.base_dilation = w.base_dilation;
    b.window_dilation = w.stride;
    b.padding_low = w.padding_low;
    b.padding_high = Dilated(output_size, w.stride) - input_size + window_size - w.padding_low - 1;
  }
  Instruction* result =
      e.Add(Opcode::kConvolution, {input, e.Convert(g, input->shape.element_type())}, std::move(attrs));
  return e.Convert(result, kernel->shape.element_type());
}

}  // namespace

KILN_VJP_RULE(ConvolutionRule) {
  for (const WindowDimension& w : x.attrs.window->dimensions) {
    if (w.window_reversal) {
      return Unimplemented(
          "kiln grad: no derivative rule yet for 'convolution' with window reversal (instruction ", x.name,
          ")");
    }
  }
  const Shape& input = x.operand(0)->shape;
  const Shape& kernel = x.operand(1)->shape;
  if (x.shape.element_count() == 0 || input.element_count() == 0 || kernel.element_count() == 0) {
    // Nothing reaches the result (or there is nothing to differentiate).
    return std::vector<Cotangent>{Of(e.Zeros(input)), Of(e.Zeros(kernel))};
  }
  return std::vector<Cotangent>{Of(InputCotangent(e, x, ct.array)), Of(KernelCotangent(e, x, ct.array))};
}

}  // namespace kiln::autodiff
