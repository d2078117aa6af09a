#include "backends/cuda/cudnn_convolution.h"

#include <limits>

#include "backends/llvm/convolution_emitter.h"

namespace kiln::cuda {
namespace {

// Element strides of a dense row-major array of `shape`, per dimension.
std::vector<int64_t> CudnnRowMajorStrides(const Shape& shape) {
  std::vector<int64_t> strides(static_cast<size_t>(shape.rank()), 1);
  for (int64_t d = shape.rank() - 2; d >= 0; --d)
    strides[static_cast<size_t>(d)] = strides[static_cast<size_t>(d + 1)] * shape.dimensions(d + 1);
  return strides;
}

// Whether `order` is `first`, `spatial...`, `last` or `first`, `last`,
// `spatial...` (channels_last says which), i.e. the arrangement cuDNN's
// NHWC or NCHW names.
bool ArrangedAs(int64_t first, int64_t features, const std::vector<int64_t>& spatial, bool channels_last) {
  if (first != 0) return false;
  const auto rank = static_cast<int64_t>(spatial.size());
  if (features != (channels_last ? rank + 1 : 1)) return false;
  for (int64_t d = 0; d < rank; ++d) {
    if (spatial[static_cast<size_t>(d)] != d + (channels_last ? 1 : 2)) return false;
  }
  return true;
}

std::string JoinInts(const std::vector<int>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i == 0 ? "" : ",") + std::to_string(values[i]);
  return text + "]";
}

}  // namespace

std::string CudnnConvolutionPlan::ToString() const {
  return "cuDNN convolution of type " + std::to_string(data_type) + ": input " + JoinInts(input_dims) +
         " strides " + JoinInts(input_strides) + ", filter " + JoinInts(filter_dims) + " format " +
         std::to_string(filter_format) + ", output " + JoinInts(output_dims) + " strides " +
         JoinInts(output_strides) + ", padding " + JoinInts(padding) + ", strides " + JoinInts(strides) +
         ", dilations " + JoinInts(dilations) + ", mode " + std::to_string(mode) + ", groups " +
         std::to_string(groups);
}

StatusOr<CudnnConvolutionPlan> PlanCudnnConvolution(const Instruction& convolution) {
  auto refuse = [&](const char* why) {
    return Unimplemented("cuda: cuDNN does not take convolution ", convolution.name, ": ", why);
  };
  if (convolution.opcode != Opcode::kConvolution) return refuse("not a convolution");
  KILN_RETURN_IF_ERROR(llvm_ir::CheckConvolutionEmittable(convolution));
  const Shape& input = convolution.operand(0)->shape;
  const Shape& filter = convolution.operand(1)->shape;
  const Shape& output = convolution.shape;
  const ElementType type = output.element_type();
  if (input.element_type() != type || filter.element_type() != type) return refuse("mixed element types");
  CudnnConvolutionPlan plan;
  switch (type) {
    case ElementType::kF32: plan.data_type = CUDNN_DATA_FLOAT; break;
    case ElementType::kF16: plan.data_type = CUDNN_DATA_HALF; break;
    case ElementType::kBF16: plan.data_type = CUDNN_DATA_BFLOAT16; break;
    default: return refuse("not f32, f16 or bf16");
  }
  // f32 keeps f32 products (no TF32); f16 and bf16 may use tensor cores.
  plan.math = type == ElementType::kF32 ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
  const ConvolutionDimensionNumbers& dn = convolution.attrs.conv;
  const std::vector<WindowDimension>& window = convolution.attrs.window->dimensions;
  if (window.size() != 2 && window.size() != 3) return refuse("cuDNN takes 2 or 3 spatial dimensions");
  if (convolution.attrs.batch_group_count != 1) return refuse("batch groups");
  for (const Shape* shape : {&input, &filter, &output}) {
    if (shape->element_count() == 0) return refuse("an empty array");
    if (shape->element_count() > std::numeric_limits<int>::max()) return refuse("more elements than an int");
  }
  const bool channels_last =
      ArrangedAs(dn.input_batch_dimension, dn.input_feature_dimension, dn.input_spatial_dimensions, true);
  if (!channels_last &&
      !ArrangedAs(dn.input_batch_dimension, dn.input_feature_dimension, dn.input_spatial_dimensions, false))
    return refuse("the input is neither (batch, feature, spatial...) nor (batch, spatial..., feature)");
  if (!ArrangedAs(dn.output_batch_dimension, dn.output_feature_dimension, dn.output_spatial_dimensions,
                  channels_last))
    return refuse("the output is not arranged as the input");
  if (!ArrangedAs(dn.kernel_output_feature_dimension, dn.kernel_input_feature_dimension,
                  dn.kernel_spatial_dimensions, channels_last))
    return refuse("the filter is not arranged as the input (out, in, spatial...) or (out, spatial..., in)");
  plan.filter_format = channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  int reversed = 0;
  for (const WindowDimension& w : window) {
    if (w.base_dilation != 1) return refuse("base (lhs) dilation");
    if (w.padding_low != w.padding_high || w.padding_low < 0) return refuse("asymmetric or negative padding");
    plan.padding.push_back(static_cast<int>(w.padding_low));
    plan.strides.push_back(static_cast<int>(w.stride));
    plan.dilations.push_back(static_cast<int>(w.window_dilation));
    reversed += w.window_reversal ? 1 : 0;
  }
  if (reversed != 0 && reversed != static_cast<int>(window.size()))
    return refuse("a window reversed along some spatial dimensions only");
  plan.mode = reversed != 0 ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION;
  plan.groups = static_cast<int>(convolution.attrs.feature_group_count);
  // cuDNN's (N, C, spatial...) order, each with its stride in memory.
  auto describe = [](const Shape& shape, int64_t batch, int64_t feature, const std::vector<int64_t>& spatial,
                     std::vector<int>& dims, std::vector<int>& strides) {
    const std::vector<int64_t> row_major = CudnnRowMajorStrides(shape);
    std::vector<int64_t> order = {batch, feature};
    order.insert(order.end(), spatial.begin(), spatial.end());
    for (int64_t d : order) {
      dims.push_back(static_cast<int>(shape.dimensions(d)));
      strides.push_back(static_cast<int>(row_major[static_cast<size_t>(d)]));
    }
  };
  describe(input, dn.input_batch_dimension, dn.input_feature_dimension, dn.input_spatial_dimensions,
           plan.input_dims, plan.input_strides);
  describe(output, dn.output_batch_dimension, dn.output_feature_dimension, dn.output_spatial_dimensions,
           plan.output_dims, plan.output_strides);
  std::vector<int> unused;
  describe(filter, dn.kernel_output_feature_dimension, dn.kernel_input_feature_dimension,
           dn.kernel_spatial_dimensions, plan.filter_dims, unused);
  return plan;
}

}  // namespace kiln::cuda
