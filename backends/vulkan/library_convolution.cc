#include "backends/vulkan/library_convolution.h"

#include <algorithm>
#include <iterator>
#include <limits>

namespace kiln::vulkan {
namespace {

// Fewer output features than this a group (depthwise convolutions) leave
// most of a tile's columns idle: the elemental kernel does them.
constexpr int64_t kMinimumGroupFeatures = 4;
// Below this many outputs the tiles are mostly padding.
constexpr int64_t kMinimumOutputs = 4096;

bool Fits32(int64_t value) { return value >= 0 && value <= std::numeric_limits<uint32_t>::max(); }

std::vector<int64_t> RowMajorStrides(const Shape& shape) {
  std::vector<int64_t> strides(static_cast<size_t>(shape.rank()), 1);
  for (int64_t d = shape.rank() - 2; d >= 0; --d)
    strides[static_cast<size_t>(d)] = strides[static_cast<size_t>(d + 1)] * shape.dimensions(d + 1);
  return strides;
}

}  // namespace

std::vector<uint32_t> ConvolutionShape::Words() const {
  std::vector<uint32_t> words{batch, channels, out_features, groups};
  auto slots = [&words](const auto& values) {
    for (const auto value : values) words.push_back(static_cast<uint32_t>(value));
  };
  slots(in_size);
  slots(out_size);
  slots(stride);
  slots(pad_low);
  words.push_back(in_stride_batch);
  words.push_back(in_stride_feature);
  slots(in_stride_spatial);
  words.push_back(filter_stride_in);
  words.push_back(filter_stride_out);
  slots(filter_stride_spatial);
  words.push_back(out_stride_batch);
  words.push_back(out_stride_feature);
  slots(out_stride_spatial);
  return words;
}

std::vector<uint32_t> ConvolutionPlan::specialization() const {
  std::vector<uint32_t> constants = tiles.specialization();
  constants.insert(constants.end(), std::begin(shape.window), std::end(shape.window));
  constants.insert(constants.end(), std::begin(shape.dilation), std::end(shape.dilation));
  constants.push_back(shape.spatial == 3 ? 3 : 2);
  constants.insert(constants.end(), std::begin(shape.base_dilation), std::end(shape.base_dilation));
  constants.insert(constants.end(), std::begin(shape.reversed), std::end(shape.reversed));
  return constants;
}

// The shader's [[unroll]] loops run a number of trips the specialization
// constants fix, and are unrolled once those are known: only the
// contraction loop and the taps' carries remain loops. (Counting the
// unrolled ones too, lavapipe's long_contraction test case, K = 864, came
// to 80k iterations, past its limit, and ran right.)
int64_t ConvolutionPlan::loops_per_tile() const {
  const int64_t threads = tiles.workgroup_size();
  const int64_t bm = tiles.bm, bn = tiles.bn, bk = tiles.bk;
  const int64_t steps = (shape.depth() + bk - 1) / bk;
  const int64_t loads = (bm * bk + threads - 1) / threads + (bk * bn + threads - 1) / threads;
  // A load's tap advances by bk input features: at most this many carries.
  const int64_t carries = (bk + shape.channels - 1) / shape.channels;
  return steps * (1 + loads * carries);
}

std::optional<ConvolutionPlan> PlanConvolution(const Instruction& convolution,
                                               const ShaderFeatures& features) {
  if (convolution.opcode != Opcode::kConvolution || convolution.operands.size() != 2) return std::nullopt;
  const Shape& input = convolution.operand(0)->shape;
  const Shape& filter = convolution.operand(1)->shape;
  const Shape& output = convolution.shape;
  if (!input.IsArray() || !filter.IsArray() || !output.IsArray()) return std::nullopt;
  const ElementType type = output.element_type();
  if (input.element_type() != type || filter.element_type() != type) return std::nullopt;
  ConvolutionPlan plan;
  if (type == ElementType::kF32) {
    plan.shader = LibraryShader::kConvolutionF32;
  } else if (type == ElementType::kF16 && features.storage16) {
    plan.shader = LibraryShader::kConvolutionF16;
  } else {
    return std::nullopt;
  }
  const ConvolutionDimensionNumbers& dn = *convolution.attrs.conv;
  const Window& window = *convolution.attrs.window;
  const size_t spatial = dn.input_spatial_dimensions.size();
  constexpr size_t kSlots = ConvolutionShape::kSlots;
  if (spatial < 1 || spatial > kSlots || window.dimensions.size() != spatial ||
      convolution.attrs.batch_group_count != 1)
    return std::nullopt;
  for (const int64_t extent : input.dimensions())
    if (extent == 0) return std::nullopt;
  if (output.element_count() == 0 || filter.element_count() == 0) return std::nullopt;
  if (!Fits32(input.element_count()) || !Fits32(filter.element_count()) || !Fits32(output.element_count()))
    return std::nullopt;

  const int64_t groups = convolution.attrs.feature_group_count;
  const int64_t channels = filter.dimensions(dn.kernel_input_feature_dimension);
  const int64_t out_features = filter.dimensions(dn.kernel_output_feature_dimension);
  if (groups < 1 || out_features % groups != 0 ||
      input.dimensions(dn.input_feature_dimension) != channels * groups)
    return std::nullopt;
  const int64_t group_features = out_features / groups;
  if (group_features < kMinimumGroupFeatures) return std::nullopt;

  const std::vector<int64_t> in_strides = RowMajorStrides(input);
  const std::vector<int64_t> filter_strides = RowMajorStrides(filter);
  const std::vector<int64_t> out_strides = RowMajorStrides(output);
  ConvolutionShape& s = plan.shape;
  s.batch = static_cast<uint32_t>(input.dimensions(dn.input_batch_dimension));
  s.channels = static_cast<uint32_t>(channels);
  s.out_features = static_cast<uint32_t>(group_features);
  s.groups = static_cast<uint32_t>(groups);
  s.in_stride_batch = static_cast<uint32_t>(in_strides[static_cast<size_t>(dn.input_batch_dimension)]);
  s.in_stride_feature = static_cast<uint32_t>(in_strides[static_cast<size_t>(dn.input_feature_dimension)]);
  s.filter_stride_in =
      static_cast<uint32_t>(filter_strides[static_cast<size_t>(dn.kernel_input_feature_dimension)]);
  s.filter_stride_out =
      static_cast<uint32_t>(filter_strides[static_cast<size_t>(dn.kernel_output_feature_dimension)]);
  s.out_stride_batch = static_cast<uint32_t>(out_strides[static_cast<size_t>(dn.output_batch_dimension)]);
  s.out_stride_feature = static_cast<uint32_t>(out_strides[static_cast<size_t>(dn.output_feature_dimension)]);
  // The spatial dimensions fill the last slots; the others keep extent 1.
  s.spatial = static_cast<uint32_t>(spatial);
  const size_t first = kSlots - spatial;
  for (size_t i = 0; i < spatial; ++i) {
    const size_t slot = first + i;
    const WindowDimension& w = window.dimensions[i];
    const auto in_dim = static_cast<size_t>(dn.input_spatial_dimensions[i]);
    const auto filter_dim = static_cast<size_t>(dn.kernel_spatial_dimensions[i]);
    const auto out_dim = static_cast<size_t>(dn.output_spatial_dimensions[i]);
    if (!Fits32(w.stride) || !Fits32(w.window_dilation) || w.base_dilation < 1 || !Fits32(w.base_dilation) ||
        w.padding_low > std::numeric_limits<int32_t>::max() ||
        w.padding_low < std::numeric_limits<int32_t>::min())
      return std::nullopt;
    s.in_size[slot] = static_cast<uint32_t>(input.dimensions(static_cast<int64_t>(in_dim)));
    s.out_size[slot] = static_cast<uint32_t>(output.dimensions(static_cast<int64_t>(out_dim)));
    s.window[slot] = static_cast<uint32_t>(filter.dimensions(static_cast<int64_t>(filter_dim)));
    s.stride[slot] = static_cast<uint32_t>(w.stride);
    s.pad_low[slot] = static_cast<int32_t>(w.padding_low);
    s.dilation[slot] = static_cast<uint32_t>(w.window_dilation);
    s.base_dilation[slot] = static_cast<uint32_t>(w.base_dilation);
    s.reversed[slot] = w.window_reversal ? 1 : 0;
    s.in_stride_spatial[slot] = static_cast<uint32_t>(in_strides[in_dim]);
    s.filter_stride_spatial[slot] = static_cast<uint32_t>(filter_strides[filter_dim]);
    s.out_stride_spatial[slot] = static_cast<uint32_t>(out_strides[out_dim]);
  }
  // The shader's window positions (stride x output + dilation x window,
  // before the padding) stay within 32 bits.
  for (size_t i = 0; i < kSlots; ++i) {
    const int64_t reach = int64_t{s.stride[i]} * s.out_size[i] + int64_t{s.dilation[i]} * s.window[i];
    if (reach > std::numeric_limits<int32_t>::max()) return std::nullopt;
  }
  if (output.element_count() < kMinimumOutputs) return std::nullopt;
  const std::optional<GemmTiles> tiles = ChooseGemmTiles(group_features, features);
  if (!tiles.has_value()) return std::nullopt;
  plan.tiles = *tiles;
  const int64_t tiles_m = (s.rows() + plan.tiles.bm - 1) / plan.tiles.bm;
  const int64_t tiles_n = (group_features + plan.tiles.bn - 1) / plan.tiles.bn;
  plan.groups = tiles_m * tiles_n * groups;
  if (!Fits32(plan.groups + std::numeric_limits<uint16_t>::max())) return std::nullopt;
  return plan;
}

std::optional<ConvolutionPlan> PlanKernelConvolution(const Computation& kernel,
                                                     const ShaderFeatures& features) {
  const Instruction* root = kernel.root();
  if (root == nullptr || root->opcode != Opcode::kConvolution || kernel.parameters().size() != 2 ||
      root->operands.size() != 2 || root->operand(0) != kernel.parameters()[0] ||
      root->operand(1) != kernel.parameters()[1])
    return std::nullopt;
  return PlanConvolution(*root, features);
}

}  // namespace kiln::vulkan
