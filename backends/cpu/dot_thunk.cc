#include "backends/cpu/dot_thunk.h"

#include <algorithm>
#include <complex>
#include <cstring>
#include <numeric>

#include "backends/cpu/eigen_dot.h"
#include "backends/cpu/onednn_matmul.h"
#include "backends/cpu/thread_pool.h"

namespace kiln::cpu {
namespace {

bool IsIdentity(const std::vector<int64_t>& permutation) {
  for (size_t i = 0; i < permutation.size(); ++i) {
    if (permutation[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

std::vector<int64_t> Concat(std::initializer_list<const std::vector<int64_t>*> parts) {
  std::vector<int64_t> all;
  for (const auto* part : parts) all.insert(all.end(), part->begin(), part->end());
  return all;
}

std::vector<int64_t> FreeDimensions(int64_t rank, const std::vector<int64_t>& batch,
                                    const std::vector<int64_t>& contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
      free.push_back(d);
    }
  }
  return free;
}

int64_t Product(const Shape& shape, const std::vector<int64_t>& dims) {
  int64_t product = 1;
  for (int64_t d : dims) product *= shape.dimensions(d);
  return product;
}

}  // namespace

std::optional<DotPlan> PlanDot(const Instruction& dot) {
  if (dot.operands.size() != 2) return std::nullopt;
  const Shape& lhs = dot.operand(0)->shape;
  const Shape& rhs = dot.operand(1)->shape;
  const ElementType type = dot.shape.element_type();
  if (lhs.element_type() != type || rhs.element_type() != type || !dot.shape.IsArray()) return std::nullopt;
  if (type != ElementType::kF32 && type != ElementType::kF64 && type != ElementType::kC64 &&
      type != ElementType::kC128) {
    return std::nullopt;
  }
  const DotDimensionNumbers& dn = dot.attrs.dot;
  const std::vector<int64_t> lhs_free =
      FreeDimensions(lhs.rank(), dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions);
  const std::vector<int64_t> rhs_free =
      FreeDimensions(rhs.rank(), dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions);
  DotPlan plan;
  DotGeometry& g = plan.geometry;
  g.type = type;
  g.batch = Product(lhs, dn.lhs_batch_dimensions);
  g.m = Product(lhs, lhs_free);
  g.k = Product(lhs, dn.lhs_contracting_dimensions);
  g.n = Product(rhs, rhs_free);
  if (g.k != Product(rhs, dn.rhs_contracting_dimensions) ||
      g.batch != Product(rhs, dn.rhs_batch_dimensions) || g.batch * g.m * g.n != dot.shape.element_count()) {
    return std::nullopt;
  }
  const std::vector<int64_t> lhs_mk =
      Concat({&dn.lhs_batch_dimensions, &lhs_free, &dn.lhs_contracting_dimensions});
  const std::vector<int64_t> lhs_km =
      Concat({&dn.lhs_batch_dimensions, &dn.lhs_contracting_dimensions, &lhs_free});
  if (IsIdentity(lhs_mk)) {
    g.lhs_contracting_first = false;
  } else if (IsIdentity(lhs_km)) {
    g.lhs_contracting_first = true;
  } else {
    plan.lhs_permutation = lhs_mk;
  }
  const std::vector<int64_t> rhs_kn =
      Concat({&dn.rhs_batch_dimensions, &dn.rhs_contracting_dimensions, &rhs_free});
  const std::vector<int64_t> rhs_nk =
      Concat({&dn.rhs_batch_dimensions, &rhs_free, &dn.rhs_contracting_dimensions});
  if (IsIdentity(rhs_kn)) {
    g.rhs_contracting_last = false;
  } else if (IsIdentity(rhs_nk)) {
    g.rhs_contracting_last = true;
  } else {
    plan.rhs_permutation = rhs_kn;
  }
  return plan;
}

DotThunk::DotThunk(int lhs, int rhs, int output, DotGeometry geometry)
    : Thunk({lhs, rhs}, {output}), geometry_(geometry) {
  // Made for the thread count a backend picks by default; a run with another
  // count makes (once) a primitive for that one.
  onednn_ = OneDnnMatmul::Create(geometry_, ResolveThreadCount(0));
}

DotThunk::~DotThunk() = default;

Status DotThunk::Run(ExecutionContext& context) const {
  const DotGeometry& g = geometry_;
  if (onednn_ != nullptr) {
    return onednn_->Run(static_cast<const float*>(context.slots[inputs_[0]]),
                        static_cast<const float*>(context.slots[inputs_[1]]),
                        static_cast<float*>(context.slots[outputs_[0]]), context.pool);
  }
  void* out = context.slots[outputs_[0]];
  const int64_t out_count = g.batch * g.m * g.n;
  if (out_count == 0) return OkStatus();
  if (g.k == 0) {
    std::memset(out, 0, static_cast<size_t>(out_count * ByteWidth(g.type)));
    return OkStatus();
  }
  const void* lhs = context.slots[inputs_[0]];
  const void* rhs = context.slots[inputs_[1]];
  switch (g.type) {
    case ElementType::kF32:
      RunEigenDot(g, static_cast<const float*>(lhs), static_cast<const float*>(rhs), static_cast<float*>(out),
                  context.pool);
      break;
    case ElementType::kF64:
      RunEigenDot(g, static_cast<const double*>(lhs), static_cast<const double*>(rhs),
                  static_cast<double*>(out), context.pool);
      break;
    case ElementType::kC64:
      RunEigenDot(g, static_cast<const std::complex<float>*>(lhs),
                  static_cast<const std::complex<float>*>(rhs), static_cast<std::complex<float>*>(out),
                  context.pool);
      break;
    case ElementType::kC128:
      RunEigenDot(g, static_cast<const std::complex<double>*>(lhs),
                  static_cast<const std::complex<double>*>(rhs), static_cast<std::complex<double>*>(out),
                  context.pool);
      break;
    default: return Internal("cpu: dot thunk on ", ElementTypeName(g.type));
  }
  return OkStatus();
}

}  // namespace kiln::cpu
