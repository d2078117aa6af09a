#include "backends/cpu/onednn_matmul.h"

#ifdef KILN_HAVE_DNNL

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "backends/cpu/onednn_runtime.h"
#include "backends/cpu/thread_pool.h"

namespace kiln::cpu {
namespace {

using dnnl::memory;

// Which dimension a product is cut along into pieces for the pool's threads:
// whole batch elements, rows of the result (M) or its columns (N). Every
// piece is an independent product on views of the operands (strides
// unchanged, data offset), so no data moves.
enum class Axis { kBatch, kRows, kColumns };

struct MatmulPiece {
  int64_t extent = 0;  // along the axis
  int64_t lhs_offset = 0, rhs_offset = 0, output_offset = 0;
};

// The product of `g` restricted to `extent` elements along `axis`, with the
// full product's strides.
struct MatmulDescriptions {
  memory::desc lhs, rhs, output;
};

memory::data_type DataType(ElementType type) {
  switch (type) {
    case ElementType::kS8: return memory::data_type::s8;
    case ElementType::kS32: return memory::data_type::s32;
    case ElementType::kBF16: return memory::data_type::bf16;
    case ElementType::kF16: return memory::data_type::f16;
    default: return memory::data_type::f32;
  }
}

// Whether oneDNN's implementation named `implementation` (impl_info_str())
// multiplies `operand_type` (bf16 or f16) on the CPU's instructions for it:
// AVX512-BF16 (vdpbf16ps, "brg:avx512_core_bf16"), AVX512-FP16 or AMX. Its
// other implementations of these types widen to f32 on the way ("gemm:jit"
// under ONEDNN_MAX_CPU_ISA=AVX512_CORE_VNNI on this machine, at the f32 rate
// or below) or are plain loops ("ref"), no faster than the f32 path.
bool UsesLowPrecisionInstructions(const std::string& implementation, ElementType operand_type) {
  auto names = [&](std::string_view part) { return implementation.find(part) != std::string::npos; };
  if (implementation.rfind("ref", 0) == 0) return false;
  if (operand_type == ElementType::kBF16) return names("avx512_core_bf16") || names("amx");
  if (operand_type == ElementType::kF16) return names("fp16");
  return false;
}

MatmulDescriptions Describe(const DotGeometry& g, Axis axis, int64_t extent) {
  const memory::data_type operands = DataType(g.operand_type), result_type = DataType(g.type);
  const int64_t batch = axis == Axis::kBatch ? extent : g.batch;
  const int64_t m = axis == Axis::kRows ? extent : g.m;
  const int64_t n = axis == Axis::kColumns ? extent : g.n;
  // Transposed operands are the same dims with swapped strides.
  const memory::dims lhs_strides =
      g.lhs_contracting_first ? memory::dims{g.m * g.k, 1, g.m} : memory::dims{g.m * g.k, g.k, 1};
  const memory::dims rhs_strides =
      g.rhs_contracting_last ? memory::dims{g.k * g.n, 1, g.k} : memory::dims{g.k * g.n, g.n, 1};
  MatmulDescriptions result;
  if (batch == 1 && g.batch == 1) {
    result.lhs = memory::desc({m, g.k}, operands, {lhs_strides[1], lhs_strides[2]});
    result.rhs = memory::desc({g.k, n}, operands, {rhs_strides[1], rhs_strides[2]});
    result.output = memory::desc({m, n}, result_type, {g.n, 1});
  } else {
    result.lhs = memory::desc({batch, m, g.k}, operands, lhs_strides);
    result.rhs = memory::desc({batch, g.k, n}, operands, rhs_strides);
    result.output = memory::desc({batch, m, n}, result_type, {g.m * g.n, g.n, 1});
  }
  return result;
}

struct MatmulPrimitive {
  MatmulDescriptions descriptions;
  dnnl::matmul::primitive_desc description;
  dnnl::matmul matmul;

  // Throws dnnl::error; the caller runs it under OmpThreadsScope(1).
  explicit MatmulPrimitive(MatmulDescriptions d)
      : descriptions(std::move(d)),
        description(dnnl::matmul::desc(descriptions.lhs, descriptions.rhs, descriptions.output),
                    onednn::UserScratchpadAttributes(), onednn::CpuEngine()),
        matmul(description) {}

  void Run(const void* lhs, const void* rhs, void* output) const {
    const dnnl::engine& engine = onednn::CpuEngine();
    onednn::OmpThreadsScope one_thread(1);
    dnnl::stream& stream = onednn::ThreadStream();
    const memory scratchpad = onednn::ThreadScratchpad(description.scratchpad_desc().get_size());
    matmul.execute(stream, {{DNNL_ARG_SRC, memory(descriptions.lhs, engine, const_cast<void*>(lhs))},
                            {DNNL_ARG_WEIGHTS, memory(descriptions.rhs, engine, const_cast<void*>(rhs))},
                            {DNNL_ARG_DST, memory(descriptions.output, engine, output)},
                            {DNNL_ARG_SCRATCHPAD, scratchpad}});
    stream.wait();
  }
};

// A product cut into pieces for a pool of some thread count: one primitive
// per distinct piece size (at most two: the regular one and the last).
struct PiecewiseMatmul {
  std::vector<MatmulPiece> pieces;
  std::vector<size_t> primitive_of;  // per piece
  std::vector<std::unique_ptr<MatmulPrimitive>> primitives;

  PiecewiseMatmul(const DotGeometry& g, int pool_threads) {
    const int64_t wanted = onednn::PiecesFor(g.batch * g.m * g.n * g.k, pool_threads);
    // Cut whole batch elements when there are enough, else the larger of
    // the result's two dimensions, in pieces of at least 8 rows or 16
    // columns (a vector of f32 or s32), so no piece is too thin to run fast.
    Axis axis = Axis::kBatch;
    int64_t extent = g.batch, smallest = 1;
    if (g.batch < wanted) {
      axis = g.m >= g.n ? Axis::kRows : Axis::kColumns;
      extent = axis == Axis::kRows ? g.m : g.n;
      smallest = axis == Axis::kRows ? 8 : 16;
    }
    const int64_t count = std::max<int64_t>(1, std::min(wanted, extent / smallest));
    const int64_t step = (extent + count - 1) / count;
    std::vector<int64_t> primitive_extents;
    for (int64_t begin = 0; begin < extent; begin += step) {
      MatmulPiece piece;
      piece.extent = std::min(step, extent - begin);
      switch (axis) {
        case Axis::kBatch:
          piece.lhs_offset = begin * g.m * g.k;
          piece.rhs_offset = begin * g.k * g.n;
          piece.output_offset = begin * g.m * g.n;
          break;
        case Axis::kRows:
          piece.lhs_offset = begin * (g.lhs_contracting_first ? 1 : g.k);
          piece.output_offset = begin * g.n;
          break;
        case Axis::kColumns:
          piece.rhs_offset = begin * (g.rhs_contracting_last ? g.k : 1);
          piece.output_offset = begin;
          break;
      }
      const auto known = std::find(primitive_extents.begin(), primitive_extents.end(), piece.extent);
      primitive_of.push_back(static_cast<size_t>(known - primitive_extents.begin()));
      if (known == primitive_extents.end()) {
        onednn::OmpThreadsScope one_thread(1);
        primitives.push_back(std::make_unique<MatmulPrimitive>(Describe(g, axis, piece.extent)));
        primitive_extents.push_back(piece.extent);
      }
      pieces.push_back(piece);
    }
  }

  // The implementation oneDNN chose for the regular pieces.
  std::string implementation() const { return primitives.front()->description.impl_info_str(); }

  // Whether oneDNN chose an implementation on the CPU's instructions for
  // the operand type for every piece (the last, shorter one may differ).
  bool AllUseLowPrecisionInstructions(ElementType operand_type) const {
    return std::all_of(primitives.begin(), primitives.end(), [&](const auto& primitive) {
      return UsesLowPrecisionInstructions(primitive->description.impl_info_str(), operand_type);
    });
  }
};

// Whether oneDNN's s8 x s8 -> s32 kernels on this CPU accumulate exactly:
// with VNNI (vpdpbusd adds each product into s32). Without it oneDNN 2.6.3's
// AVX2 int8 gemm adds pairs of products in 16 bits (vpmaddubsw), which
// saturate: s8 values over their whole range gave sums off by thousands
// under ONEDNN_MAX_CPU_ISA=AVX2 on this machine (runtime_int8_dot_test).
bool Int8IsExact() {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  auto has = [isa](dnnl::cpu_isa wanted) {
    const auto bits = static_cast<unsigned>(wanted);
    return (isa & bits) == bits;
  };
  return has(dnnl::cpu_isa::avx512_core_vnni) || has(dnnl::cpu_isa::avx2_vnni);
}

}  // namespace

struct OneDnnMatmul::Impl {
  explicit Impl(DotGeometry g) : geometry(g), plans(g) {}
  DotGeometry geometry;
  onednn::PerThreadCount<PiecewiseMatmul, DotGeometry> plans;
};

bool OneDnnMatmul::Available() { return true; }

bool OneDnnMatmul::RunsInt8() {
  static const bool exact = Int8IsExact();
  return exact;
}

OneDnnMatmul::OneDnnMatmul(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OneDnnMatmul::~OneDnnMatmul() = default;

namespace {

bool IsHalfOrBfloat16(ElementType type) { return type == ElementType::kBF16 || type == ElementType::kF16; }

// The geometries Create considers at all: f32, s8 x s8 -> s32 where exact,
// and f16/bf16 operands with an f32 result, of kMinimumProduct or more.
bool MatmulConsiders(const DotGeometry& g) {
  const bool f32 = g.type == ElementType::kF32 && g.operand_type == ElementType::kF32;
  const bool int8 = g.type == ElementType::kS32 && g.operand_type == ElementType::kS8;
  const bool low = g.type == ElementType::kF32 && IsHalfOrBfloat16(g.operand_type);
  if ((!f32 && !low && !(int8 && OneDnnMatmul::RunsInt8())) || g.batch < 1 || g.m < 1 || g.n < 1 || g.k < 1)
    return false;
  return g.m * g.n * g.k >= OneDnnMatmul::kMinimumProduct;
}

}  // namespace

bool OneDnnMatmul::RunsLowPrecisionNatively(const DotGeometry& g) {
  if (!IsHalfOrBfloat16(g.operand_type) || !MatmulConsiders(g)) return false;
  try {
    onednn::OmpThreadsScope one_thread(1);
    const MatmulDescriptions d = Describe(g, Axis::kBatch, g.batch);
    const dnnl::matmul::primitive_desc description(dnnl::matmul::desc(d.lhs, d.rhs, d.output),
                                                   onednn::UserScratchpadAttributes(), onednn::CpuEngine());
    return UsesLowPrecisionInstructions(description.impl_info_str(), g.operand_type);
  } catch (const dnnl::error&) {
    return false;  // no implementation of these types at all (f16 on oneDNN 2.6.3)
  }
}

std::unique_ptr<OneDnnMatmul> OneDnnMatmul::Create(const DotGeometry& g, int pool_threads) {
  if (!MatmulConsiders(g)) return nullptr;
  try {
    auto impl = std::make_unique<Impl>(g);
    const PiecewiseMatmul& plan = impl->plans.GetOrThrow(pool_threads);
    if (IsHalfOrBfloat16(g.operand_type)) {
      // Anything else runs at the f32 rate or below: the f32 path is as fast.
      if (!plan.AllUseLowPrecisionInstructions(g.operand_type)) return nullptr;
    } else if (plan.implementation().rfind("ref", 0) == 0) {
      return nullptr;  // plain loops: Eigen (f32) or the dot thunk's own integer loop is faster
    }
    return std::unique_ptr<OneDnnMatmul>(new OneDnnMatmul(std::move(impl)));
  } catch (const dnnl::error&) {
    return nullptr;
  }
}

size_t OneDnnMatmul::pieces(int pool_threads) const {
  return impl_->plans.GetOrThrow(pool_threads).pieces.size();
}

Status OneDnnMatmul::Run(const void* lhs, const void* rhs, void* output,
                         const IntraOpThreadPool* pool) const {
  const DotGeometry& g = impl_->geometry;
  const int64_t operand_bytes = ByteWidth(g.operand_type), output_bytes = ByteWidth(g.type);
  const auto* lhs_bytes = static_cast<const char*>(lhs);
  const auto* rhs_bytes = static_cast<const char*>(rhs);
  auto* output_bytes_base = static_cast<char*>(output);
  const int pool_threads = pool == nullptr ? 1 : pool->num_threads();
  KILN_ASSIGN_OR_RETURN(const PiecewiseMatmul* plan, impl_->plans.Get(pool_threads));
  onednn::PieceErrors error;
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const MatmulPiece& piece = plan->pieces[static_cast<size_t>(p)];
      error.Guard([&] {
        plan->primitives[plan->primitive_of[static_cast<size_t>(p)]]->Run(
            lhs_bytes + piece.lhs_offset * operand_bytes, rhs_bytes + piece.rhs_offset * operand_bytes,
            output_bytes_base + piece.output_offset * output_bytes);
      });
    }
  };
  const auto count = static_cast<int64_t>(plan->pieces.size());
  if (count == 1 || pool == nullptr) {
    run(0, count);
  } else {
    pool->ParallelFor(count, 1, run);
  }
  return error.ToStatus("dot");
}

}  // namespace kiln::cpu

#else  // !KILN_HAVE_DNNL

namespace kiln::cpu {

struct OneDnnMatmul::Impl {};

bool OneDnnMatmul::Available() { return false; }
bool OneDnnMatmul::RunsInt8() { return false; }
bool OneDnnMatmul::RunsLowPrecisionNatively(const DotGeometry&) { return false; }
OneDnnMatmul::OneDnnMatmul(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OneDnnMatmul::~OneDnnMatmul() = default;
std::unique_ptr<OneDnnMatmul> OneDnnMatmul::Create(const DotGeometry&, int) { return nullptr; }
Status OneDnnMatmul::Run(const void*, const void*, void*, const IntraOpThreadPool*) const {
  return Unimplemented("dot: this build has no oneDNN");
}
size_t OneDnnMatmul::pieces(int) const { return 0; }

}  // namespace kiln::cpu

#endif  // KILN_HAVE_DNNL
