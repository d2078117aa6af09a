#include "backends/cpu/onednn_convolution.h"

#ifdef KILN_HAVE_DNNL

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/onednn_runtime.h"
#include "backends/cpu/thread_pool.h"

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

// A part of a convolution: `batch` images and, along the first spatial
// dimension, `in_rows` input rows giving `out_rows` output rows with the
// padding the part has at its two ends. The whole convolution is one part.
struct Extent {
  int64_t batch = 0, in_rows = 0, out_rows = 0, padding_low = 0, padding_high = 0;
  bool operator==(const Extent&) const = default;
};

Extent Whole(const ConvolutionGeometry& g) {
  return {g.out_batch, g.in_spatial[0], g.out_spatial[0], g.window[0].padding_low, g.window[0].padding_high};
}

Descriptions Describe(const ConvolutionGeometry& g, const Extent& extent) {
  const int64_t in_features = g.kernel_in_features * g.feature_groups;
  memory::dims source_dims{extent.batch, in_features}, source_strides{g.in_batch_stride, g.in_feature_stride};
  memory::dims destination_dims{extent.batch, g.out_features},
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
    source_dims.push_back(d == 0 ? extent.in_rows : g.in_spatial[d]);
    source_strides.push_back(g.in_spatial_strides[d]);
    destination_dims.push_back(d == 0 ? extent.out_rows : g.out_spatial[d]);
    destination_strides.push_back(g.out_spatial_strides[d]);
    weights_dims.push_back(g.kernel_spatial[d]);
    weights_strides.push_back(g.kernel_spatial_strides[d]);
    result.strides.push_back(w.stride);
    result.dilations.push_back(w.window_dilation - 1);  // oneDNN counts the gaps
    result.padding_low.push_back(d == 0 ? extent.padding_low : w.padding_low);
    result.padding_high.push_back(d == 0 ? extent.padding_high : w.padding_high);
  }
  const auto f32 = memory::data_type::f32;
  result.source = memory::desc(source_dims, f32, source_strides);
  result.weights = memory::desc(weights_dims, f32, weights_strides);
  result.destination = memory::desc(destination_dims, f32, destination_strides);
  result.allow_winograd = g.allow_winograd;
  result.multiply_adds = g.rows * g.patch_columns * g.group_out_features * g.groups();
  return result;
}

struct Reorder {
  dnnl::reorder::primitive_desc description;
  dnnl::reorder primitive;

  void Execute(dnnl::stream& stream, const memory& from, const memory& to, const memory& scratchpad) const {
    primitive.execute(stream, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}, {DNNL_ARG_SCRATCHPAD, scratchpad}});
  }
};

std::optional<Reorder> ReorderIfNeeded(const memory::desc& from, const memory::desc& to) {
  if (from == to) return std::nullopt;
  const dnnl::engine& engine = onednn::CpuEngine();
  Reorder reorder;
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

// `weights`: the layout to take the weights in (format_tag::any: oneDNN's choice).
dnnl::convolution_forward::primitive_desc DescribeConvolution(const Descriptions& d,
                                                              memory::format_tag activations,
                                                              dnnl::algorithm algorithm,
                                                              const memory::desc& weights) {
  const auto f32 = memory::data_type::f32;
  const dnnl::convolution_forward::desc operation(dnnl::prop_kind::forward_inference, algorithm,
                                                  memory::desc(d.source.dims(), f32, activations), weights,
                                                  memory::desc(d.destination.dims(), f32, activations),
                                                  d.strides, d.dilations, d.padding_low, d.padding_high);
  return dnnl::convolution_forward::primitive_desc(operation, onednn::UserScratchpadAttributes(),
                                                   onednn::CpuEngine());
}

// oneDNN's reference implementations are plain loops, slower than the Eigen
// path, so a geometry that only they would run stays there.
bool IsReference(const dnnl::convolution_forward::primitive_desc& description) {
  return std::string(description.impl_info_str()).rfind("ref", 0) == 0;
}

// How a convolution's primitives are asked for: the layout of the
// activations and the algorithm. The first piece's are chosen as
// ActivationLayout and WinogradCandidate (of the whole convolution) say,
// falling back to oneDNN's choice when the blocked layout has no fast
// implementation: on AVX-512 it runs channels-last or 16-channel blocked
// kernels several times faster than on the plain layout it would otherwise
// have to take (an im2col + GEMM implementation for NCHW), which pays for
// reordering a channels-first input and output.
struct Choice {
  memory::format_tag activations = memory::format_tag::any;
  dnnl::algorithm algorithm = dnnl::algorithm::convolution_direct;
};

std::pair<Choice, dnnl::convolution_forward::primitive_desc> ChooseFirst(const Descriptions& whole,
                                                                         const Descriptions& piece) {
  const memory::format_tag preferred = ActivationLayout(whole);
  const memory::desc any_weights(piece.weights.dims(), memory::data_type::f32, memory::format_tag::any);
  std::vector<Choice> candidates;
  if (preferred != memory::format_tag::any && WinogradCandidate(whole)) {
    candidates.push_back({preferred, dnnl::algorithm::convolution_winograd});
  }
  if (preferred != memory::format_tag::any)
    candidates.push_back({preferred, dnnl::algorithm::convolution_direct});
  for (const Choice& choice : candidates) {
    try {
      dnnl::convolution_forward::primitive_desc description =
          DescribeConvolution(piece, choice.activations, choice.algorithm, any_weights);
      if (!IsReference(description)) return {choice, std::move(description)};
    } catch (const dnnl::error&) {
      // not covered by a kernel: the next candidate
    }
  }
  const Choice fallback;
  return {fallback, DescribeConvolution(piece, fallback.activations, fallback.algorithm, any_weights)};
}

// The primitive of one piece shape and the reorders of its activations.
struct PiecePrimitives {
  Extent extent;
  memory::desc source, destination;  // the piece's views of the user's operands
  dnnl::convolution_forward::primitive_desc description;
  dnnl::convolution_forward convolution;
  std::optional<Reorder> source_in, destination_out;
  size_t scratchpad_bytes = 0;

  PiecePrimitives(const Extent& piece_extent, const Descriptions& piece,
                  dnnl::convolution_forward::primitive_desc chosen)
      : extent(piece_extent),
        source(piece.source),
        destination(piece.destination),
        description(std::move(chosen)),
        convolution(description),
        source_in(ReorderIfNeeded(piece.source, description.src_desc())),
        destination_out(ReorderIfNeeded(description.dst_desc(), piece.destination)) {
    scratchpad_bytes = description.scratchpad_desc().get_size();
    for (const std::optional<Reorder>* reorder : {&source_in, &destination_out}) {
      if (reorder->has_value()) {
        scratchpad_bytes = std::max(scratchpad_bytes, (*reorder)->description.scratchpad_desc().get_size());
      }
    }
  }
};

// Where one piece reads and writes, in elements from the operands' starts.
struct Piece {
  int64_t source_offset = 0, destination_offset = 0;
  size_t shape = 0;  // index into ConvolutionPrimitives::shapes
};

// The piece of `g` that covers images [batch_begin, batch_begin + batch)
// and output rows [row_begin, row_end) of the first spatial dimension,
// reading only the input rows those need: padding stands in for missing rows
// only at the true edges. Nothing when the rows would all be padding.
std::optional<std::pair<Extent, Piece>> PlanPiece(const ConvolutionGeometry& g, int64_t batch_begin,
                                                  int64_t batch, int64_t row_begin, int64_t row_end) {
  const WindowDimension& w = g.window[0];
  const int64_t reach = (g.kernel_spatial[0] - 1) * w.window_dilation + 1;
  const int64_t first = row_begin * w.stride - w.padding_low;             // maybe in the padding
  const int64_t last = (row_end - 1) * w.stride - w.padding_low + reach;  // one past the end
  const int64_t source_begin = std::max<int64_t>(0, first);
  const int64_t source_end = std::min(g.in_spatial[0], last);
  if (source_end <= source_begin) return std::nullopt;
  Extent extent{batch, source_end - source_begin, row_end - row_begin, source_begin - first,
                last - source_end};
  Piece piece;
  piece.source_offset = batch_begin * g.in_batch_stride + source_begin * g.in_spatial_strides[0];
  piece.destination_offset = batch_begin * g.out_batch_stride + row_begin * g.out_spatial_strides[0];
  return std::make_pair(extent, piece);
}

// A convolution cut into pieces for a pool of some thread count (see
// onednn::PiecesFor): whole images when the batch has one per thread, else
// bands of rows of the first spatial dimension. The weights are reordered
// once per run, by the calling thread, into the layout all pieces share;
// each piece reorders its own activations. One primitive per distinct piece
// shape (the regular one, the edges, the remainder). When a piece shape
// cannot take the shared weights layout, the convolution stays one piece.
struct ConvolutionPrimitives {
  memory::desc user_weights;  // the weights as the caller lays them out
  memory::desc weights;       // the layout the primitives take them in
  std::optional<Reorder> weights_in;
  std::vector<Piece> pieces;
  std::vector<std::unique_ptr<PiecePrimitives>> shapes;
  size_t scratchpad_bytes = 0;

  // Throws dnnl::error; runs under OmpThreadsScope(1).
  ConvolutionPrimitives(const ConvolutionGeometry& g, int pool_threads) {
    const Descriptions whole = Describe(g, Whole(g));
    user_weights = whole.weights;
    if (!PlanPieces(g, whole, pool_threads)) {
      pieces.clear();
      shapes.clear();
      // Only a convolution whose output reads nothing but padding fails
      // here; the caller's own path runs it.
      if (!PlanPieces(g, whole, 1)) throw dnnl::error(dnnl_unimplemented, "the output reads only padding");
    }
    weights_in = ReorderIfNeeded(whole.weights, weights);
    if (weights_in.has_value()) scratchpad_bytes = weights_in->description.scratchpad_desc().get_size();
    for (const auto& shape : shapes) scratchpad_bytes = std::max(scratchpad_bytes, shape->scratchpad_bytes);
  }

  const dnnl::convolution_forward::primitive_desc& description() const { return shapes.front()->description; }

 private:
  bool PlanPieces(const ConvolutionGeometry& g, const Descriptions& whole, int pool_threads) {
    const int64_t batch = g.out_batch, rows = g.out_spatial[0];
    const int64_t wanted = onednn::PiecesFor(whole.multiply_adds, pool_threads);
    int64_t batch_step = batch, row_step = rows;
    if (wanted > 1 && batch >= pool_threads) {
      const int64_t count = std::min(wanted, batch);
      batch_step = (batch + count - 1) / count;
    } else if (wanted > 1) {
      // Bands of a multiple of 4 rows (Winograd's output tile) when that
      // still leaves a band per thread.
      row_step = (rows + wanted - 1) / wanted;
      if (rows >= 4 * pool_threads) row_step = (row_step + 3) / 4 * 4;
    }
    Choice choice;
    for (int64_t b = 0; b < batch; b += batch_step) {
      for (int64_t r = 0; r < rows; r += row_step) {
        std::optional<std::pair<Extent, Piece>> planned =
            PlanPiece(g, b, std::min(batch_step, batch - b), r, std::min(rows, r + row_step));
        if (!planned.has_value()) return false;
        auto& [extent, piece] = *planned;
        piece.shape = shapes.size();
        for (size_t s = 0; s < shapes.size(); ++s) {
          if (shapes[s]->extent == extent) piece.shape = s;
        }
        if (piece.shape == shapes.size()) {
          const Descriptions described = Describe(g, extent);
          if (shapes.empty()) {
            auto [chosen, description] = ChooseFirst(whole, described);
            choice = chosen;
            weights = description.weights_desc();
            shapes.push_back(std::make_unique<PiecePrimitives>(extent, described, std::move(description)));
          } else {
            try {
              dnnl::convolution_forward::primitive_desc description =
                  DescribeConvolution(described, choice.activations, choice.algorithm, weights);
              if (IsReference(description) || description.weights_desc() != weights) return false;
              shapes.push_back(std::make_unique<PiecePrimitives>(extent, described, std::move(description)));
            } catch (const dnnl::error&) {
              return false;
            }
          }
        }
        pieces.push_back(piece);
      }
    }
    return true;
  }
};

}  // namespace

struct OneDnnConvolution::Impl {
  explicit Impl(const ConvolutionGeometry& g) : primitives(g) {
    const Descriptions whole = Describe(g, Whole(g));
    may_use_winograd = ActivationLayout(whole) != memory::format_tag::any && WinogradCandidate(whole);
  }
  onednn::PerThreadCount<ConvolutionPrimitives, ConvolutionGeometry> primitives;
  int first_threads = 0;
  bool may_use_winograd = false;  // as ChooseFirst asks for it
};

bool OneDnnConvolution::Available() { return true; }

OneDnnConvolution::OneDnnConvolution(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OneDnnConvolution::~OneDnnConvolution() = default;

std::unique_ptr<OneDnnConvolution> OneDnnConvolution::Create(const ConvolutionGeometry& geometry,
                                                             int pool_threads) {
  if (!Expressible(geometry)) return nullptr;
  try {
    auto impl = std::make_unique<Impl>(geometry);
    impl->first_threads = pool_threads;
    if (IsReference(impl->primitives.GetOrThrow(pool_threads).description())) return nullptr;
    return std::unique_ptr<OneDnnConvolution>(new OneDnnConvolution(std::move(impl)));
  } catch (const dnnl::error&) {
    return nullptr;  // no oneDNN implementation: the caller's path runs it
  }
}

std::string OneDnnConvolution::implementation() const {
  return impl_->primitives.GetOrThrow(impl_->first_threads).description().impl_info_str();
}

size_t OneDnnConvolution::pieces(int pool_threads) const {
  return impl_->primitives.GetOrThrow(pool_threads).pieces.size();
}

bool OneDnnConvolution::may_use_winograd() const { return impl_->may_use_winograd; }

Status OneDnnConvolution::Run(const float* input, const float* kernel, float* output,
                              const IntraOpThreadPool* pool) const {
  const int pool_threads = pool == nullptr ? 1 : pool->num_threads();
  KILN_ASSIGN_OR_RETURN(const ConvolutionPrimitives* primitives, impl_->primitives.Get(pool_threads));
  const dnnl::engine& engine = onednn::CpuEngine();
  onednn::PieceErrors errors;
  // The weights in the pieces' layout: where they lie, or staged once in
  // this thread's scratch.
  const float* weights = kernel;
  errors.Guard([&] {
    if (!primitives->weights_in.has_value()) return;
    onednn::OmpThreadsScope one_thread(1);
    dnnl::stream& stream = onednn::ThreadStream();
    const memory staged(primitives->weights, engine,
                        onednn::ThreadScratch::Get(2, primitives->weights.get_size()));
    primitives->weights_in->Execute(stream,
                                    memory(primitives->user_weights, engine, const_cast<float*>(kernel)),
                                    staged, onednn::ThreadScratchpad(primitives->scratchpad_bytes));
    stream.wait();
    weights = static_cast<const float*>(staged.get_data_handle());
  });
  KILN_RETURN_IF_ERROR(errors.ToStatus("convolution"));
  auto run = [&](int64_t begin, int64_t end) {
    onednn::OmpThreadsScope one_thread(1);
    for (int64_t p = begin; p < end; ++p) {
      errors.Guard([&] {
        const Piece& piece = primitives->pieces[static_cast<size_t>(p)];
        const PiecePrimitives& shape = *primitives->shapes[piece.shape];
        dnnl::stream& stream = onednn::ThreadStream();
        const memory scratchpad = onednn::ThreadScratchpad(primitives->scratchpad_bytes);
        // Activations go through this thread's scratch in oneDNN's layout;
        // ones already in it are used where they lie.
        memory source(shape.source, engine, const_cast<float*>(input + piece.source_offset));
        if (shape.source_in.has_value()) {
          const memory::desc target = shape.description.src_desc();
          const memory staged(target, engine, onednn::ThreadScratch::Get(1, target.get_size()));
          shape.source_in->Execute(stream, source, staged, scratchpad);
          source = staged;
        }
        const memory user_destination(shape.destination, engine, output + piece.destination_offset);
        const memory destination =
            shape.destination_out.has_value()
                ? memory(shape.description.dst_desc(), engine,
                         onednn::ThreadScratch::Get(3, shape.description.dst_desc().get_size()))
                : user_destination;
        shape.convolution.execute(
            stream, {{DNNL_ARG_SRC, source},
                     {DNNL_ARG_WEIGHTS, memory(primitives->weights, engine, const_cast<float*>(weights))},
                     {DNNL_ARG_DST, destination},
                     {DNNL_ARG_SCRATCHPAD, scratchpad}});
        if (shape.destination_out.has_value()) {
          shape.destination_out->Execute(stream, destination, user_destination, scratchpad);
        }
        stream.wait();
      });
    }
  };
  const auto count = static_cast<int64_t>(primitives->pieces.size());
  if (count == 1 || pool == nullptr) {
    run(0, count);
  } else {
    pool->ParallelFor(count, 1, run);
  }
  return errors.ToStatus("convolution");
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
Status OneDnnConvolution::Run(const float*, const float*, float*, const IntraOpThreadPool*) const {
  return Unimplemented("convolution: this build has no oneDNN");
}
size_t OneDnnConvolution::pieces(int) const { return 0; }
bool OneDnnConvolution::may_use_winograd() const { return false; }

}  // namespace kiln::cpu

#endif  // KILN_HAVE_DNNL
