#include "backends/cpu/dot_thunk.h"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#include "backends/cpu/eigen_dot.h"
#include "backends/cpu/onednn_matmul.h"
#include "backends/cpu/thread_pool.h"
#include "core/dot_dimensions.h"

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

// s8 x s8 -> s32 where oneDNN does not run it: small products, builds
// without oneDNN. Each product fits in 16 bits and the sums wrap modulo 2^32
// (unsigned arithmetic, so the wrap is defined), as the interpreter's do.
// Innermost loop over the result's columns when the rhs is [K, N], so it
// vectorises; over K otherwise.
void RunInt8Dot(const DotGeometry& g, const int8_t* lhs, const int8_t* rhs, int32_t* out,
                const IntraOpThreadPool* pool) {
  const int64_t lhs_size = g.m * g.k, rhs_size = g.k * g.n;
  auto lhs_at = [&](const int8_t* a, int64_t i, int64_t p) {
    return static_cast<uint32_t>(
        static_cast<int32_t>(a[g.lhs_contracting_first ? p * g.m + i : i * g.k + p]));
  };
  auto rows = [&](int64_t begin, int64_t end) {  // rows of the batched result
    std::vector<uint32_t> sums(static_cast<size_t>(g.n));
    for (int64_t row = begin; row < end; ++row) {
      const int64_t b = row / g.m, i = row % g.m;
      const int8_t* a = lhs + b * lhs_size;
      const int8_t* c = rhs + b * rhs_size;
      std::fill(sums.begin(), sums.end(), 0u);
      if (!g.rhs_contracting_last) {
        for (int64_t p = 0; p < g.k; ++p) {
          const uint32_t x = lhs_at(a, i, p);
          const int8_t* c_row = c + p * g.n;
          for (int64_t j = 0; j < g.n; ++j) {
            sums[static_cast<size_t>(j)] += x * static_cast<uint32_t>(static_cast<int32_t>(c_row[j]));
          }
        }
      } else {
        for (int64_t j = 0; j < g.n; ++j) {
          const int8_t* c_column = c + j * g.k;
          uint32_t sum = 0;
          for (int64_t p = 0; p < g.k; ++p)
            sum += lhs_at(a, i, p) * static_cast<uint32_t>(static_cast<int32_t>(c_column[p]));
          sums[static_cast<size_t>(j)] = sum;
        }
      }
      int32_t* out_row = out + row * g.n;
      for (int64_t j = 0; j < g.n; ++j) out_row[j] = static_cast<int32_t>(sums[static_cast<size_t>(j)]);
    }
  };
  const int64_t total_rows = g.batch * g.m;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, g.n * g.k));
  if (pool == nullptr) {
    rows(0, total_rows);
  } else {
    pool->ParallelFor(total_rows, grain, rows);
  }
}

}  // namespace

std::optional<DotPlan> PlanDot(const Instruction& dot) {
  if (dot.operands.size() != 2) return std::nullopt;
  const Shape& lhs = dot.operand(0)->shape;
  const Shape& rhs = dot.operand(1)->shape;
  if (!dot.shape.IsArray()) return std::nullopt;
  const ElementType type = dot.shape.element_type();
  const ElementType operand_type = lhs.element_type();
  if (rhs.element_type() != operand_type) return std::nullopt;
  const bool int8 = operand_type == ElementType::kS8 && type == ElementType::kS32;
  const bool low_precision =
      (operand_type == ElementType::kBF16 || operand_type == ElementType::kF16) && type == ElementType::kF32;
  if (!int8 && !low_precision && operand_type != type) return std::nullopt;
  if (!int8 && type != ElementType::kF32 && type != ElementType::kF64 && type != ElementType::kC64 &&
      type != ElementType::kC128) {
    return std::nullopt;
  }
  const DotDimensionNumbers& dn = dot.attrs.dot;
  const std::vector<int64_t> lhs_free =
      DotFreeDimensions(lhs.rank(), dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions);
  const std::vector<int64_t> rhs_free =
      DotFreeDimensions(rhs.rank(), dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions);
  DotPlan plan;
  DotGeometry& g = plan.geometry;
  g.type = type;
  g.operand_type = operand_type;
  g.batch = DimensionsProduct(lhs, dn.lhs_batch_dimensions);
  g.m = DimensionsProduct(lhs, lhs_free);
  g.k = DimensionsProduct(lhs, dn.lhs_contracting_dimensions);
  g.n = DimensionsProduct(rhs, rhs_free);
  if (g.k != DimensionsProduct(rhs, dn.rhs_contracting_dimensions) ||
      g.batch != DimensionsProduct(rhs, dn.rhs_batch_dimensions) ||
      g.batch * g.m * g.n != dot.shape.element_count()) {
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

bool RunsLowPrecisionDotAsIs(const Instruction& dot) {
  if (dot.opcode != Opcode::kDot) return false;
  const std::optional<DotPlan> plan = PlanDot(dot);
  return plan.has_value() && plan->geometry.operand_type != plan->geometry.type &&
         plan->geometry.type == ElementType::kF32 && OneDnnMatmul::RunsLowPrecisionNatively(plan->geometry);
}

DotThunk::DotThunk(int lhs, int rhs, int output, DotGeometry geometry)
    : Thunk({lhs, rhs}, {output}), geometry_(geometry) {
  // Made for the thread count a backend picks by default; a run with another
  // count makes (once) a primitive for that one.
  onednn_ = OneDnnMatmul::Create(geometry_, ResolveThreadCount(0));
  if (onednn_ != nullptr) return;
  const bool exact_in_f32 = geometry_.type == ElementType::kS32 && geometry_.k <= kExactF32Depth;
  const bool low_precision =
      geometry_.type == ElementType::kF32 && geometry_.operand_type != ElementType::kF32;
  if (exact_in_f32 || low_precision) {
    DotGeometry widened = geometry_;
    widened.type = widened.operand_type = ElementType::kF32;
    widened_ = OneDnnMatmul::Create(widened, ResolveThreadCount(0));
    // An s8 product widens only for oneDNN: its own integer loop beats Eigen.
    widens_ = widened_ != nullptr || low_precision;
  }
}

Status DotThunk::RunWidened(ExecutionContext& context) const {
  const DotGeometry& g = geometry_;
  const void* lhs = context.slots[inputs_[0]];
  const void* rhs = context.slots[inputs_[1]];
  void* out = context.slots[outputs_[0]];
  std::vector<float> wide_lhs(static_cast<size_t>(g.batch * g.m * g.k));
  std::vector<float> wide_rhs(static_cast<size_t>(g.batch * g.k * g.n));
  auto over = [&](int64_t count, auto&& body) {
    if (context.pool == nullptr) {
      body(int64_t{0}, count);
    } else {
      context.pool->ParallelFor(count, int64_t{1} << 16, body);
    }
  };
  auto widen = [&](const void* narrow, std::vector<float>& wide) {
    DispatchElementType(g.operand_type, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, bfloat16> || std::is_same_v<T, half>) {
        const auto* values = static_cast<const T*>(narrow);
        over(static_cast<int64_t>(wide.size()), [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) wide[static_cast<size_t>(i)] = static_cast<float>(values[i]);
        });
      }
    });
  };
  widen(lhs, wide_lhs);
  widen(rhs, wide_rhs);
  if (g.type == ElementType::kF32) {
    if (widened_ != nullptr) return widened_->Run(wide_lhs.data(), wide_rhs.data(), out, context.pool);
    DotGeometry widened = g;
    widened.operand_type = ElementType::kF32;
    RunEigenDot(widened, wide_lhs.data(), wide_rhs.data(), static_cast<float*>(out), context.pool);
    return OkStatus();
  }
  // s32 from sums that f32 holds exactly (kExactF32Depth).
  std::vector<float> wide_out(static_cast<size_t>(g.batch * g.m * g.n));
  KILN_RETURN_IF_ERROR(widened_->Run(wide_lhs.data(), wide_rhs.data(), wide_out.data(), context.pool));
  auto* ints = static_cast<int32_t*>(out);
  over(static_cast<int64_t>(wide_out.size()), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) ints[i] = static_cast<int32_t>(wide_out[static_cast<size_t>(i)]);
  });
  return OkStatus();
}

DotThunk::~DotThunk() = default;

Status DotThunk::Run(ExecutionContext& context) const {
  const DotGeometry& g = geometry_;
  if (onednn_ != nullptr) {
    return onednn_->Run(context.slots[inputs_[0]], context.slots[inputs_[1]], context.slots[outputs_[0]],
                        context.pool);
  }
  void* out = context.slots[outputs_[0]];
  const int64_t out_count = g.batch * g.m * g.n;
  if (out_count == 0) return OkStatus();
  if (g.k == 0) {
    std::memset(out, 0, static_cast<size_t>(out_count * ByteWidth(g.type)));
    return OkStatus();
  }
  if (widens_) return RunWidened(context);
  const void* lhs = context.slots[inputs_[0]];
  const void* rhs = context.slots[inputs_[1]];
  switch (g.type) {
    case ElementType::kS32:
      RunInt8Dot(g, static_cast<const int8_t*>(lhs), static_cast<const int8_t*>(rhs),
                 static_cast<int32_t*>(out), context.pool);
      break;
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
