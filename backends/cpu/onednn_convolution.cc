#include "backends/cpu/onednn_convolution.h"

#ifdef KILN_HAVE_DNNL

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/onednn_runtime.h"

namespace kiln::cpu {
namespace {

using dnnl::memory;

// The oneDNN descriptions of one geometry, independent of thread count.
struct Descriptions {
  memory::desc source, weights, destination;
  memory::dims strides, dilations, padding_low, padding_high;
  bool allow_winograd = false;  // ConvolutionGeometry::allow_winograd
  int64_t multiply_adds = 0;
};

bool Expressible(const ConvolutionGeometry& g) {
  if (g.type != ElementType::kF32 || g.batch_groups != 1) return false;
  if (g.spatial_rank < 1 || g.spatial_rank > 3) return false;
  if (g.rows <= 0 || g.patch_columns <= 0 || g.out_features <= 0) return false;
  for (size_t d = 0; d < g.spatial_rank; ++d) {
    const WindowDimension& w = g.window[d];
    if (w.base_dilation != 1 || w.window_reversal || w.padding_low < 0 || w.padding_high < 0) return false;
    if (g.in_spatial[d] <= 0 || g.kernel_spatial[d] <= 0 || g.out_spatial[d] <= 0) return false;
  }
  return true;
}

Descriptions Describe(const ConvolutionGeometry& g) {
  const int64_t in_features = g.kernel_in_features * g.feature_groups;
  memory::dims source_dims{g.out_batch, in_features}, source_strides{g.in_batch_stride, g.in_feature_stride};
  memory::dims destination_dims{g.out_batch, g.out_features},
      destination_strides{g.out_batch_stride, g.out_feature_stride};
  // Grouped weights are goi... in oneDNN: the group is a dimension of its own.
  memory::dims weights_dims, weights_strides;
  if (g.feature_groups > 1) {
    weights_dims = {g.feature_groups, g.group_out_features, g.kernel_in_features};
    weights_strides = {g.group_out_features * g.kernel_out_stride, g.kernel_out_stride, g.kernel_in_stride};
  } else {
    weights_dims = {g.out_features, g.kernel_in_features};
    weights_strides = {g.kernel_out_stride, g.kernel_in_stride};
  }
  Descriptions result;
  for (size_t d = 0; d < g.spatial_rank; ++d) {
    const WindowDimension& w = g.window[d];
    source_dims.push_back(g.in_spatial[d]);
    source_strides.push_back(g.in_spatial_strides[d]);
    destination_dims.push_back(g.out_spatial[d]);
    destination_strides.push_back(g.out_spatial_strides[d]);
    weights_dims.push_back(g.kernel_spatial[d]);
    weights_strides.push_back(g.kernel_spatial_strides[d]);
    result.strides.push_back(w.stride);
    result.dilations.push_back(w.window_dilation - 1);  // oneDNN counts the gaps
    result.padding_low.push_back(w.padding_low);
    result.padding_high.push_back(w.padding_high);
  }
  const auto f32 = memory::data_type::f32;
  result.source = memory::desc(source_dims, f32, source_strides);
  result.weights = memory::desc(weights_dims, f32, weights_strides);
  result.destination = memory::desc(destination_dims, f32, destination_strides);
  result.allow_winograd = g.allow_winograd;
  result.multiply_adds = g.rows * g.patch_columns * g.group_out_features * g.groups();
  return result;
}

// Reorders of less than this run on the calling thread alone (the weights,
// usually): waking the other threads would cost more than the copy. Larger
// ones are memory-bound but still gain from a second thread: on the NCHW 3x3
// 64->64 56x56 batch-8 convolution, 4.7 ms median with two-thread reorders,
// 5.4 ms with one (quiet machine; under another process's load the extra
// parallel regions stall as kParallelMultiplyAdds describes: 32 vs 15 ms).
constexpr size_t kParallelReorderBytes = size_t{1} << 20;

struct Reorder {
  dnnl::reorder::primitive_desc description;
  dnnl::reorder primitive;
  int threads = 1;

  void Execute(dnnl::stream& stream, const memory& from, const memory& to, const memory& scratchpad) const {
    onednn::OmpThreadsScope scope(threads);
    primitive.execute(stream, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}, {DNNL_ARG_SCRATCHPAD, scratchpad}});
  }
};

std::optional<Reorder> ReorderIfNeeded(const memory::desc& from, const memory::desc& to, int num_threads) {
  if (from == to) return std::nullopt;
  const dnnl::engine& engine = onednn::CpuEngine();
  Reorder reorder;
  reorder.threads = from.get_size() < kParallelReorderBytes ? 1 : num_threads;
  onednn::OmpThreadsScope scope(reorder.threads);
  reorder.description =
      dnnl::reorder::primitive_desc(engine, from, engine, to, onednn::UserScratchpadAttributes());
  reorder.primitive = dnnl::reorder(reorder.description);
  return reorder;
}

// The activation layout to ask oneDNN for. On AVX-512 a 2-D convolution
// whose channel counts are multiples of 16 runs in the 16-channel blocked
// layout: on the NCHW 3x3 64->64 56x56 batch-8 convolution, 8.6-8.8 ms median
// against 9.4-10.2 ms for what format_tag::any picks (channels-last
// "brgconv", whose reorders from and to NCHW cost 1.3 ms instead of 1.0).
// Elsewhere oneDNN picks (format_tag::any).
memory::format_tag ActivationLayout(const Descriptions& d) {
  if (d.source.dims().size() != 4 || d.weights.dims().size() != 4) return memory::format_tag::any;
  if (d.source.dims()[1] % 16 != 0 || d.destination.dims()[1] % 16 != 0) return memory::format_tag::any;
  if (dnnl::get_effective_cpu_isa() < dnnl::cpu_isa::avx512_core) return memory::format_tag::any;
  return memory::format_tag::nChw16c;
}

// Winograd's F(4x4, 3x3) (oneDNN's jit_wino_4x3 kernels, AVX-512) does a
// 3x3 convolution with about a quarter of the multiplications. On the NCHW
// 3x3 64->64 56x56 batch-8 convolution the primitive took 4.0 ms against
// 8.7 ms direct; its largest error relative to the sum of the products'
// magnitudes was 5.3e-7 (4.5 float epsilons; direct: 8.0e-8). Asked for on
// 2-D 3x3 stride-1 undilated ungrouped convolutions of at least 2^23
// multiply-adds (smaller ones gain little over the transforms' cost), when
// the operands' precision allows it; oneDNN refuses the geometries its
// kernels do not cover (e.g. channel counts not multiples of 16).
constexpr int64_t kWinogradMultiplyAdds = int64_t{1} << 23;

bool WinogradCandidate(const Descriptions& d) {
  if (!d.allow_winograd || d.multiply_adds < kWinogradMultiplyAdds) return false;
  if (d.source.dims().size() != 4 || d.weights.dims().size() != 4) return false;
  const memory::dims& kernel = d.weights.dims();
  if (kernel[2] != 3 || kernel[3] != 3) return false;
  for (memory::dim stride : d.strides) {
    if (stride != 1) return false;
  }
  for (memory::dim dilation : d.dilations) {
    if (dilation != 0) return false;
  }
  return true;
}

dnnl::convolution_forward::primitive_desc DescribeConvolution(const Descriptions& d,
                                                              memory::format_tag activations,
                                                              dnnl::algorithm algorithm) {
  const auto f32 = memory::data_type::f32;
  const dnnl::convolution_forward::desc operation(
      dnnl::prop_kind::forward_inference, algorithm, memory::desc(d.source.dims(), f32, activations),
      memory::desc(d.weights.dims(), f32, memory::format_tag::any),
      memory::desc(d.destination.dims(), f32, activations), d.strides, d.dilations, d.padding_low,
      d.padding_high);
  return dnnl::convolution_forward::primitive_desc(operation, onednn::UserScratchpadAttributes(),
                                                   onednn::CpuEngine());
}

// oneDNN's reference implementations are plain loops, slower than the Eigen
// path, so a geometry that only they would run stays there.
bool IsReference(const dnnl::convolution_forward::primitive_desc& description) {
  return std::string(description.impl_info_str()).rfind("ref", 0) == 0;
}

// The primitive and reorders made for one thread count. Layouts as
// ActivationLayout says, falling back to oneDNN's choice when the blocked
// layout has no fast implementation: on AVX-512 it runs channels-last or
// 16-channel blocked kernels several times faster than on the plain layout it
// would otherwise have to take (an im2col + GEMM implementation for NCHW),
// which pays for reordering a channels-first input and output.
struct ConvolutionPrimitives {
  dnnl::convolution_forward::primitive_desc description;
  dnnl::convolution_forward convolution;
  std::optional<Reorder> source_in, weights_in, destination_out;
  size_t scratchpad_bytes = 0;

  ConvolutionPrimitives(const Descriptions& d, int num_threads) {
    const memory::format_tag preferred = ActivationLayout(d);
    bool chosen = false;
    auto try_describe = [&](dnnl::algorithm algorithm) {
      try {
        description = DescribeConvolution(d, preferred, algorithm);
        chosen = !IsReference(description);
      } catch (const dnnl::error&) {
        chosen = false;
      }
    };
    if (preferred != memory::format_tag::any && WinogradCandidate(d)) {
      try_describe(dnnl::algorithm::convolution_winograd);
    }
    if (!chosen && preferred != memory::format_tag::any) try_describe(dnnl::algorithm::convolution_direct);
    if (!chosen)
      description = DescribeConvolution(d, memory::format_tag::any, dnnl::algorithm::convolution_direct);
    convolution = dnnl::convolution_forward(description);
    source_in = ReorderIfNeeded(d.source, description.src_desc(), num_threads);
    weights_in = ReorderIfNeeded(d.weights, description.weights_desc(), num_threads);
    destination_out = ReorderIfNeeded(description.dst_desc(), d.destination, num_threads);
    scratchpad_bytes = description.scratchpad_desc().get_size();
    for (const std::optional<Reorder>* reorder : {&source_in, &weights_in, &destination_out}) {
      if (reorder->has_value()) {
        scratchpad_bytes = std::max(scratchpad_bytes, (*reorder)->description.scratchpad_desc().get_size());
      }
    }
  }
};

}  // namespace

struct OneDnnConvolution::Impl {
  explicit Impl(Descriptions descriptions) : primitives(std::move(descriptions)) {}
  onednn::PerThreadCount<ConvolutionPrimitives, Descriptions> primitives;
  int64_t multiply_adds() const { return primitives.spec().multiply_adds; }
  int first_threads = 0;
};

bool OneDnnConvolution::Available() { return true; }

OneDnnConvolution::OneDnnConvolution(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OneDnnConvolution::~OneDnnConvolution() = default;

std::unique_ptr<OneDnnConvolution> OneDnnConvolution::Create(const ConvolutionGeometry& geometry,
                                                             int pool_threads) {
  if (!Expressible(geometry)) return nullptr;
  try {
    const ConvolutionGeometry& g = geometry;
    auto impl = std::make_unique<Impl>(Describe(g));
    impl->first_threads = onednn::ThreadsFor(impl->multiply_adds(), pool_threads);
    if (IsReference(impl->primitives.GetOrThrow(impl->first_threads).description)) return nullptr;
    return std::unique_ptr<OneDnnConvolution>(new OneDnnConvolution(std::move(impl)));
  } catch (const dnnl::error&) {
    return nullptr;  // no oneDNN implementation: the caller's path runs it
  }
}

std::string OneDnnConvolution::implementation() const {
  return impl_->primitives.GetOrThrow(impl_->first_threads).description.impl_info_str();
}

Status OneDnnConvolution::Run(const float* input, const float* kernel, float* output,
                              int pool_threads) const {
  const int num_threads = onednn::ThreadsFor(impl_->multiply_adds(), pool_threads);
  KILN_ASSIGN_OR_RETURN(const ConvolutionPrimitives* primitives, impl_->primitives.Get(num_threads));
  const Descriptions& d = impl_->primitives.spec();
  const dnnl::engine& engine = onednn::CpuEngine();
  try {
    onednn::OmpThreadsScope threads(num_threads);
    dnnl::stream& stream = onednn::ThreadStream();
    const memory scratchpad = onednn::ThreadScratchpad(primitives->scratchpad_bytes);
    // Operands go through this thread's scratch in oneDNN's layouts; one
    // already in the layout the primitive wants is used where it lies.
    auto stage_in = [&](const std::optional<Reorder>& reorder, const memory::desc& user, const float* data,
                        int slot) {
      const memory user_memory(user, engine, const_cast<float*>(data));
      if (!reorder.has_value()) return user_memory;
      const memory::desc target = reorder->description.dst_desc();
      const memory staged(target, engine, onednn::ThreadScratch::Get(slot, target.get_size()));
      reorder->Execute(stream, user_memory, staged, scratchpad);
      return staged;
    };
    const memory source = stage_in(primitives->source_in, d.source, input, 1);
    const memory weights = stage_in(primitives->weights_in, d.weights, kernel, 2);
    const memory user_destination(d.destination, engine, output);
    const memory destination =
        primitives->destination_out.has_value()
            ? memory(primitives->description.dst_desc(), engine,
                     onednn::ThreadScratch::Get(3, primitives->description.dst_desc().get_size()))
            : user_destination;
    primitives->convolution.execute(stream, {{DNNL_ARG_SRC, source},
                                             {DNNL_ARG_WEIGHTS, weights},
                                             {DNNL_ARG_DST, destination},
                                             {DNNL_ARG_SCRATCHPAD, scratchpad}});
    if (primitives->destination_out.has_value()) {
      primitives->destination_out->Execute(stream, destination, user_destination, scratchpad);
    }
    stream.wait();
  } catch (const dnnl::error& error) {
    return Internal("convolution: oneDNN failed: ", error.what());
  }
  return OkStatus();
}

}  // namespace kiln::cpu

#else  // !KILN_HAVE_DNNL

namespace kiln::cpu {

struct OneDnnConvolution::Impl {};

bool OneDnnConvolution::Available() { return false; }
OneDnnConvolution::OneDnnConvolution(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OneDnnConvolution::~OneDnnConvolution() = default;
std::unique_ptr<OneDnnConvolution> OneDnnConvolution::Create(const ConvolutionGeometry&, int) {
  return nullptr;
}
std::string OneDnnConvolution::implementation() const { return ""; }
Status OneDnnConvolution::Run(const float*, const float*, float*, int) const {
  return Unimplemented("convolution: this build has no oneDNN");
}

}  // namespace kiln::cpu

#endif  // KILN_HAVE_DNNL
