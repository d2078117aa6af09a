#include "backends/cpu/onednn_matmul.h"

#ifdef KILN_HAVE_DNNL

#include <string>

#include "backends/cpu/onednn_runtime.h"

namespace kiln::cpu {
namespace {

using dnnl::memory;

struct MatmulDescriptions {
  memory::desc lhs, rhs, output;
};

MatmulDescriptions Describe(const DotGeometry& g) {
  const auto f32 = memory::data_type::f32;
  // Transposed operands are the same dims with swapped strides.
  const memory::dims lhs_strides =
      g.lhs_contracting_first ? memory::dims{g.m * g.k, 1, g.m} : memory::dims{g.m * g.k, g.k, 1};
  const memory::dims rhs_strides =
      g.rhs_contracting_last ? memory::dims{g.k * g.n, 1, g.k} : memory::dims{g.k * g.n, g.n, 1};
  MatmulDescriptions result;
  if (g.batch == 1) {
    result.lhs = memory::desc({g.m, g.k}, f32, {lhs_strides[1], lhs_strides[2]});
    result.rhs = memory::desc({g.k, g.n}, f32, {rhs_strides[1], rhs_strides[2]});
    result.output = memory::desc({g.m, g.n}, f32, {g.n, 1});
  } else {
    result.lhs = memory::desc({g.batch, g.m, g.k}, f32, lhs_strides);
    result.rhs = memory::desc({g.batch, g.k, g.n}, f32, rhs_strides);
    result.output = memory::desc({g.batch, g.m, g.n}, f32, {g.m * g.n, g.n, 1});
  }
  return result;
}

struct MatmulPrimitives {
  dnnl::matmul::primitive_desc description;
  dnnl::matmul matmul;

  MatmulPrimitives(const MatmulDescriptions& d, int /*num_threads: set by the caller's scope*/)
      : description(dnnl::matmul::desc(d.lhs, d.rhs, d.output), onednn::UserScratchpadAttributes(),
                    onednn::CpuEngine()),
        matmul(description) {}
};

}  // namespace

struct OneDnnMatmul::Impl {
  Impl(MatmulDescriptions descriptions, int64_t multiply_adds)
      : primitives(std::move(descriptions)), multiply_adds(multiply_adds) {}
  onednn::PerThreadCount<MatmulPrimitives, MatmulDescriptions> primitives;
  int64_t multiply_adds = 0;
};

bool OneDnnMatmul::Available() { return true; }

OneDnnMatmul::OneDnnMatmul(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OneDnnMatmul::~OneDnnMatmul() = default;

std::unique_ptr<OneDnnMatmul> OneDnnMatmul::Create(const DotGeometry& g, int pool_threads) {
  if (g.type != ElementType::kF32 || g.batch < 1 || g.m < 1 || g.n < 1 || g.k < 1) return nullptr;
  if (g.m * g.n * g.k < kMinimumProduct) return nullptr;
  try {
    auto impl = std::make_unique<Impl>(Describe(g), g.batch * g.m * g.n * g.k);
    const int threads = onednn::ThreadsFor(impl->multiply_adds, pool_threads);
    const std::string implementation = impl->primitives.GetOrThrow(threads).description.impl_info_str();
    if (implementation.rfind("ref", 0) == 0) return nullptr;  // plain loops: Eigen is faster
    return std::unique_ptr<OneDnnMatmul>(new OneDnnMatmul(std::move(impl)));
  } catch (const dnnl::error&) {
    return nullptr;
  }
}

Status OneDnnMatmul::Run(const float* lhs, const float* rhs, float* output, int pool_threads) const {
  const int num_threads = onednn::ThreadsFor(impl_->multiply_adds, pool_threads);
  KILN_ASSIGN_OR_RETURN(const MatmulPrimitives* primitives, impl_->primitives.Get(num_threads));
  const MatmulDescriptions& d = impl_->primitives.spec();
  const dnnl::engine& engine = onednn::CpuEngine();
  try {
    onednn::OmpThreadsScope threads(num_threads);
    dnnl::stream& stream = onednn::ThreadStream();
    const memory scratchpad = onednn::ThreadScratchpad(primitives->description.scratchpad_desc().get_size());
    primitives->matmul.execute(stream, {{DNNL_ARG_SRC, memory(d.lhs, engine, const_cast<float*>(lhs))},
                                        {DNNL_ARG_WEIGHTS, memory(d.rhs, engine, const_cast<float*>(rhs))},
                                        {DNNL_ARG_DST, memory(d.output, engine, output)},
                                        {DNNL_ARG_SCRATCHPAD, scratchpad}});
    stream.wait();
  } catch (const dnnl::error& error) {
    return Internal("dot: oneDNN failed: ", error.what());
  }
  return OkStatus();
}

}  // namespace kiln::cpu

#else  // !KILN_HAVE_DNNL

namespace kiln::cpu {

struct OneDnnMatmul::Impl {};

bool OneDnnMatmul::Available() { return false; }
OneDnnMatmul::OneDnnMatmul(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OneDnnMatmul::~OneDnnMatmul() = default;
std::unique_ptr<OneDnnMatmul> OneDnnMatmul::Create(const DotGeometry&, int) { return nullptr; }
Status OneDnnMatmul::Run(const float*, const float*, float*, int) const {
  return Unimplemented("dot: this build has no oneDNN");
}

}  // namespace kiln::cpu

#endif  // KILN_HAVE_DNNL
