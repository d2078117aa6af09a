// convolution with general dimension numbers: the input is permuted to
// [batch, spatial..., feature], the kernel to [spatial..., in_feature,
// out_feature] and the result computed as [batch, spatial..., out_feature],
// so the innermost loop runs over contiguous output features.
//
// Padding and the holes between base-dilated input elements are zeros that
// take part in the products (README, numerics: "a convolution's padding"),
// for every float type: a kernel tap that lands there adds zero x weight, so
// an infinite or NaN weight makes that output NaN, as XLA's semantics say and
// cuDNN computes it (README names where JAX's CPU skips such taps instead).
// Integer zero products change nothing and are skipped. A finite weight's
// zero product is +0 or -0 and leaves every sum bit for bit as it was: a
// sum starts at +0, an IEEE sum is -0 only when both terms are, so no sum is
// ever -0, and adding a zero to a nonzero sum is exact.
#include <algorithm>
#include <type_traits>

#include "core/interpreter/accumulation.h"
#include "core/interpreter/array_util.h"
#include "core/interpreter/kernels.h"

namespace kiln::interpreter {
namespace {

struct ConvGeometry {
  int64_t spatial_rank = 0;
  std::vector<int64_t> in_spatial, kernel_spatial, out_spatial;
  int64_t in_batch = 0, in_features = 0, kernel_in_features = 0, out_features = 0, out_batch = 0;
  int64_t feature_groups = 1, batch_groups = 1;
};

template <typename Acc>
void Convolve(const ConvGeometry& g, const Window& window, const std::vector<Acc>& input,
              const std::vector<Acc>& kernel, std::vector<Acc>& output) {
  const size_t rank = static_cast<size_t>(g.spatial_rank);
  const int64_t partitions = g.feature_groups * g.batch_groups;  // at most one of them exceeds 1
  const int64_t chunk = g.out_features / partitions;
  const int64_t cig = g.kernel_in_features;
  const std::vector<int64_t> in_strides = RowMajorStrides(g.in_spatial);
  const std::vector<int64_t> kernel_strides = RowMajorStrides(g.kernel_spatial);
  int64_t in_spatial_size = 1, out_spatial_size = 1;
  for (int64_t d : g.in_spatial) in_spatial_size *= d;
  for (int64_t d : g.out_spatial) out_spatial_size *= d;
  int64_t kernel_spatial_size = 1;
  for (int64_t d : g.kernel_spatial) kernel_spatial_size *= d;

  std::vector<int64_t> out_index(rank, 0), kernel_index(rank, 0);
  for (int64_t n = 0; n < g.out_batch; ++n) {
    std::fill(out_index.begin(), out_index.end(), 0);
    for (int64_t o = 0; o < out_spatial_size; ++o) {
      Acc* out_row = output.data() + (n * out_spatial_size + o) * g.out_features;
      std::fill(kernel_index.begin(), kernel_index.end(), 0);
      for (int64_t kpos = 0; kpos < kernel_spatial_size; ++kpos) {
        // Input position of this kernel tap; `real` is false where it lands
        // in the padding or a hole between dilated input elements.
        int64_t in_offset = 0;
        int64_t kernel_offset = 0;
        bool real = true;
        for (size_t d = 0; d < rank; ++d) {
          const WindowDimension& w = window.dimensions[d];
          const int64_t position =
              out_index[d] * w.stride + kernel_index[d] * w.window_dilation - w.padding_low;
          if (position < 0 || position % w.base_dilation != 0 ||
              position / w.base_dilation >= g.in_spatial[d]) {
            real = false;
          } else {
            in_offset += position / w.base_dilation * in_strides[d];
          }
          const int64_t tap = w.window_reversal ? g.kernel_spatial[d] - 1 - kernel_index[d] : kernel_index[d];
          kernel_offset += tap * kernel_strides[d];
        }
        // An integer zero product changes nothing: only floats pay for it.
        if (real || !std::is_integral_v<Acc>) {
          for (int64_t p = 0; p < partitions; ++p) {
            const int64_t group = g.feature_groups > 1 ? p : 0;
            const int64_t batch = (g.batch_groups > 1 ? p * g.out_batch : 0) + n;
            const Acc* in_row =
                real ? input.data() + (batch * in_spatial_size + in_offset) * g.in_features + group * cig
                     : nullptr;
            const Acc* kernel_block = kernel.data() + kernel_offset * cig * g.out_features + p * chunk;
            Acc* __restrict out_chunk = out_row + p * chunk;
            for (int64_t ci = 0; ci < cig; ++ci) {
              const Acc x = real ? in_row[ci] : Acc{};
              const Acc* __restrict kernel_row = kernel_block + ci * g.out_features;
              for (int64_t j = 0; j < chunk; ++j) out_chunk[j] += x * kernel_row[j];
            }
          }
        }
        NextIndex(g.kernel_spatial, kernel_index);
      }
      NextIndex(g.out_spatial, out_index);
    }
  }
}

}  // namespace

StatusOr<Literal> EvaluateConvolution(const Instruction& instruction, Operands operands) {
  const Literal& lhs = *operands[0];
  const Literal& rhs = *operands[1];
  const ConvolutionDimensionNumbers& dn = instruction.attrs.conv;
  const Shape& out_shape = instruction.shape;
  ConvGeometry g;
  g.spatial_rank = static_cast<int64_t>(dn.input_spatial_dimensions.size());
  const int64_t rank = g.spatial_rank + 2;
  if (lhs.shape().rank() != rank || rhs.shape().rank() != rank || out_shape.rank() != rank ||
      static_cast<int64_t>(dn.kernel_spatial_dimensions.size()) != g.spatial_rank ||
      static_cast<int64_t>(dn.output_spatial_dimensions.size()) != g.spatial_rank ||
      static_cast<int64_t>(instruction.attrs.window->dimensions.size()) != g.spatial_rank) {
    return InvalidArgument("convolution ranks do not match its dimension numbers and window");
  }
  std::vector<int64_t> all_dims = {dn.input_batch_dimension,          dn.input_feature_dimension,
                                   dn.kernel_input_feature_dimension, dn.kernel_output_feature_dimension,
                                   dn.output_batch_dimension,         dn.output_feature_dimension};
  for (const auto* list :
       {&dn.input_spatial_dimensions, &dn.kernel_spatial_dimensions, &dn.output_spatial_dimensions}) {
    all_dims.insert(all_dims.end(), list->begin(), list->end());
  }
  for (int64_t d : all_dims) {
    if (d < 0 || d >= rank) return InvalidArgument("convolution dimension number ", d, " out of range");
  }
  for (const WindowDimension& w : instruction.attrs.window->dimensions) {
    if (w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1) {
      return InvalidArgument("convolution window needs positive strides and dilations");
    }
  }
  std::vector<int64_t> lhs_order = {dn.input_batch_dimension};
  std::vector<int64_t> rhs_order;
  std::vector<int64_t> out_order(static_cast<size_t>(rank));
  out_order[static_cast<size_t>(dn.output_batch_dimension)] = 0;
  for (int64_t i = 0; i < g.spatial_rank; ++i) {
    const auto s = static_cast<size_t>(i);
    lhs_order.push_back(dn.input_spatial_dimensions[s]);
    rhs_order.push_back(dn.kernel_spatial_dimensions[s]);
    g.in_spatial.push_back(lhs.shape().dimensions(dn.input_spatial_dimensions[s]));
    g.kernel_spatial.push_back(rhs.shape().dimensions(dn.kernel_spatial_dimensions[s]));
    g.out_spatial.push_back(out_shape.dimensions(dn.output_spatial_dimensions[s]));
    out_order[static_cast<size_t>(dn.output_spatial_dimensions[s])] = 1 + i;
  }
  lhs_order.push_back(dn.input_feature_dimension);
  rhs_order.push_back(dn.kernel_input_feature_dimension);
  rhs_order.push_back(dn.kernel_output_feature_dimension);
  out_order[static_cast<size_t>(dn.output_feature_dimension)] = g.spatial_rank + 1;
  g.in_batch = lhs.shape().dimensions(dn.input_batch_dimension);
  g.in_features = lhs.shape().dimensions(dn.input_feature_dimension);
  g.kernel_in_features = rhs.shape().dimensions(dn.kernel_input_feature_dimension);
  g.out_features = rhs.shape().dimensions(dn.kernel_output_feature_dimension);
  g.out_batch = out_shape.dimensions(dn.output_batch_dimension);
  g.feature_groups = instruction.attrs.feature_group_count;
  g.batch_groups = instruction.attrs.batch_group_count;
  if (g.feature_groups < 1 || g.batch_groups < 1 || (g.feature_groups > 1 && g.batch_groups > 1) ||
      g.in_features != g.kernel_in_features * g.feature_groups ||
      g.out_features % (g.feature_groups * g.batch_groups) != 0 ||
      g.in_batch != g.out_batch * g.batch_groups ||
      out_shape.dimensions(dn.output_feature_dimension) != g.out_features) {
    return InvalidArgument("convolution of ", lhs.shape().ToString(), " and ", rhs.shape().ToString(),
                           " with feature_group_count=", g.feature_groups,
                           " batch_group_count=", g.batch_groups, " does not match result ",
                           out_shape.ToString());
  }
  const Literal lhs_canonical = TransposeLiteral(lhs, lhs_order);
  const Literal rhs_canonical = TransposeLiteral(rhs, rhs_order);
  std::vector<int64_t> canonical_dims = {g.out_batch};
  canonical_dims.insert(canonical_dims.end(), g.out_spatial.begin(), g.out_spatial.end());
  canonical_dims.push_back(g.out_features);
  Literal canonical(Shape(out_shape.element_type(), canonical_dims));
  DispatchElementType(out_shape.element_type(), [&](auto tag) {
    using Out = decltype(tag);
    using Acc = AccumulatorType<Out>;
    const std::vector<Acc> input = ToAccumulator<Acc>(lhs_canonical);
    const std::vector<Acc> kernel = ToAccumulator<Acc>(rhs_canonical);
    std::vector<Acc> output(static_cast<size_t>(canonical.element_count()), Acc{});
    if (!output.empty()) Convolve(g, instruction.attrs.window, input, kernel, output);
    FromAccumulator<Out>(output, canonical);
  });
  Literal result = TransposeLiteral(canonical, out_order);
  result.set_layout(out_shape.layout());
  return result;
}

}  // namespace kiln::interpreter
