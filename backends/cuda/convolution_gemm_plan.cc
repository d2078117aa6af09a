#include "backends/cuda/convolution_gemm_plan.h"

#include "backends/llvm/convolution_emitter.h"

namespace kiln::cuda {
namespace {

// Element strides of a dense row-major array of `shape`, per dimension.
std::vector<int64_t> RowMajorStridesOf(const Shape& shape) {
  std::vector<int64_t> strides(static_cast<size_t>(shape.rank()), 1);
  for (int64_t d = shape.rank() - 2; d >= 0; --d)
    strides[static_cast<size_t>(d)] = strides[static_cast<size_t>(d + 1)] * shape.dimensions(d + 1);
  return strides;
}

bool SummedInF32(ElementType type) {
  return type == ElementType::kF32 || type == ElementType::kF16 || type == ElementType::kBF16;
}

}  // namespace

StatusOr<ConvolutionGemmPlan> PlanConvolutionGemm(const Instruction& convolution) {
  if (convolution.opcode != Opcode::kConvolution)
    return Unimplemented("cuda: ", convolution.name, " is not a convolution");
  KILN_RETURN_IF_ERROR(llvm_ir::CheckConvolutionEmittable(convolution));
  const Shape& input = convolution.operand(0)->shape;
  const Shape& kernel = convolution.operand(1)->shape;
  const Shape& output = convolution.shape;
  for (const Shape* shape : {&input, &kernel, &output}) {
    if (!SummedInF32(shape->element_type()))
      return Unimplemented("cuda: the implicit-GEMM convolution sums f32, f16 and bf16 only, not ",
                           ElementTypeName(shape->element_type()));
    if (shape->element_count() == 0) return Unimplemented("cuda: an empty convolution needs no GEMM");
  }
  const ConvolutionDimensionNumbers& dn = convolution.attrs.conv;
  const std::vector<WindowDimension>& window = convolution.attrs.window->dimensions;
  const std::vector<int64_t> input_strides = RowMajorStridesOf(input);
  const std::vector<int64_t> kernel_strides = RowMajorStridesOf(kernel);
  const std::vector<int64_t> output_strides = RowMajorStridesOf(output);
  auto at = [](const std::vector<int64_t>& values, int64_t d) { return values[static_cast<size_t>(d)]; };

  ConvolutionGemmPlan plan;
  plan.input_type = input.element_type();
  plan.kernel_type = kernel.element_type();
  plan.output_type = output.element_type();
  const int64_t feature_groups = convolution.attrs.feature_group_count;
  const int64_t batch_groups = convolution.attrs.batch_group_count;
  plan.groups = feature_groups * batch_groups;
  plan.output_batch = output.dimensions(dn.output_batch_dimension);
  plan.n = output.dimensions(dn.output_feature_dimension) / plan.groups;
  plan.group_input_features = kernel.dimensions(dn.kernel_input_feature_dimension);
  plan.input_batch_stride = at(input_strides, dn.input_batch_dimension);
  plan.input_feature_stride = at(input_strides, dn.input_feature_dimension);
  plan.kernel_input_feature_stride = at(kernel_strides, dn.kernel_input_feature_dimension);
  plan.kernel_output_feature_stride = at(kernel_strides, dn.kernel_output_feature_dimension);
  plan.output_batch_stride = at(output_strides, dn.output_batch_dimension);
  plan.output_feature_stride = at(output_strides, dn.output_feature_dimension);
  // Group g reads input features [g * group features, ...) or, with batch
  // groups, input batch [g * output batch, ...).
  plan.input_group_stride = batch_groups > 1 ? plan.output_batch * plan.input_batch_stride
                                             : plan.group_input_features * plan.input_feature_stride;
  for (size_t d = 0; d < window.size(); ++d) {
    ConvolutionGemmSpatial spatial;
    const WindowDimension& w = window[d];
    spatial.input_extent = input.dimensions(dn.input_spatial_dimensions[d]);
    spatial.output_extent = output.dimensions(dn.output_spatial_dimensions[d]);
    spatial.window_size = w.size;
    spatial.stride = w.stride;
    spatial.padding_low = w.padding_low;
    spatial.window_dilation = w.window_dilation;
    spatial.base_dilation = w.base_dilation;
    spatial.window_reversal = w.window_reversal;
    spatial.input_stride = at(input_strides, dn.input_spatial_dimensions[d]);
    spatial.kernel_stride = at(kernel_strides, dn.kernel_spatial_dimensions[d]);
    spatial.output_stride = at(output_strides, dn.output_spatial_dimensions[d]);
    plan.window_elements *= spatial.window_size;
    plan.output_spatial_elements *= spatial.output_extent;
    plan.spatial.push_back(spatial);
  }
  plan.m = plan.output_batch * plan.output_spatial_elements;
  plan.k = plan.group_input_features * plan.window_elements;
  plan.stage_input_along_k = plan.input_feature_stride == 1;
  // Staged along m, the input does not care which of a depth's parts runs
  // fastest; the filter is contiguous along k with the window positions
  // fastest where its last spatial dimension is its contiguous one.
  const int64_t last_kernel_stride = plan.spatial.empty() ? 0 : plan.spatial.back().kernel_stride;
  plan.window_minor_depth = !plan.stage_input_along_k && last_kernel_stride == 1;
  const int64_t depth_stride =
      plan.window_minor_depth ? last_kernel_stride : plan.kernel_input_feature_stride;
  plan.stage_filter_along_k = plan.kernel_output_feature_stride != 1 && depth_stride == 1;
  return plan;
}

}  // namespace kiln::cuda
