#include "backends/vulkan/library_dot.h"

#include <limits>

#include "core/dot_dimensions.h"

namespace kiln::vulkan {
namespace {

constexpr int64_t kMinimumExtent = 32;

std::vector<int64_t> DotRowMajorStrides(const Shape& shape) {
  std::vector<int64_t> strides(static_cast<size_t>(shape.rank()), 1);
  for (int64_t d = shape.rank() - 2; d >= 0; --d)
    strides[static_cast<size_t>(d)] = strides[static_cast<size_t>(d + 1)] * shape.dimensions(d + 1);
  return strides;
}

// The one dimension of `shape` that is neither batch nor contracting.
std::optional<int64_t> FreeDimension(const Shape& shape, const std::vector<int64_t>& batch,
                                     const std::vector<int64_t>& contracting) {
  const std::vector<int64_t> free = DotFreeDimensions(shape.rank(), batch, contracting);
  if (free.size() != 1) return std::nullopt;
  return free.front();
}

bool DotFits32(int64_t value) { return value >= 0 && value <= std::numeric_limits<uint32_t>::max(); }

}  // namespace

std::vector<uint32_t> DotShape::Words() const {
  std::vector<uint32_t> words{m, n, k, lhs_m_stride, lhs_k_stride, rhs_n_stride, rhs_k_stride, batch};
  words.insert(words.end(), batch_extent.begin(), batch_extent.end());
  words.insert(words.end(), lhs_batch_stride.begin(), lhs_batch_stride.end());
  words.insert(words.end(), rhs_batch_stride.begin(), rhs_batch_stride.end());
  return words;
}

std::vector<uint32_t> DotPlan::specialization() const {
  std::vector<uint32_t> constants = tiles.specialization();
  constants.push_back(lhs_along_k ? 1 : 0);
  constants.push_back(rhs_along_n ? 1 : 0);
  for (uint32_t word : {shape.m, shape.n, shape.k, shape.lhs_m_stride, shape.lhs_k_stride, shape.rhs_n_stride,
                        shape.rhs_k_stride})
    constants.push_back(word);
  return constants;
}

int64_t DotPlan::loops_per_tile() const { return (int64_t{shape.k} + tiles.bk - 1) / tiles.bk; }

std::optional<DotPlan> PlanDot(const Instruction& dot, const ShaderFeatures& features) {
  if (dot.opcode != Opcode::kDot || dot.operands.size() != 2) return std::nullopt;
  const Shape& lhs = dot.operand(0)->shape;
  const Shape& rhs = dot.operand(1)->shape;
  if (!lhs.IsArray() || !rhs.IsArray() || !dot.shape.IsArray()) return std::nullopt;
  if (lhs.element_type() != ElementType::kF32 || rhs.element_type() != ElementType::kF32 ||
      dot.shape.element_type() != ElementType::kF32)
    return std::nullopt;
  if (!DotFits32(lhs.element_count()) || !DotFits32(rhs.element_count()) ||
      !DotFits32(dot.shape.element_count()))
    return std::nullopt;
  const DotDimensionNumbers& dn = dot.attrs.dot;
  if (dn.lhs_contracting_dimensions.size() != 1 || dn.rhs_contracting_dimensions.size() != 1 ||
      dn.lhs_batch_dimensions.size() != dn.rhs_batch_dimensions.size() ||
      dn.lhs_batch_dimensions.size() > static_cast<size_t>(DotShape::kMaxBatch))
    return std::nullopt;
  const std::optional<int64_t> lhs_free =
      FreeDimension(lhs, dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions);
  const std::optional<int64_t> rhs_free =
      FreeDimension(rhs, dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions);
  const size_t batch_rank = dn.lhs_batch_dimensions.size();
  if (!lhs_free.has_value() || !rhs_free.has_value() ||
      dot.shape.rank() != static_cast<int64_t>(batch_rank) + 2)
    return std::nullopt;

  DotPlan plan;
  DotShape& s = plan.shape;
  const std::vector<int64_t> lhs_strides = DotRowMajorStrides(lhs);
  const std::vector<int64_t> rhs_strides = DotRowMajorStrides(rhs);
  for (size_t i = 0; i < batch_rank; ++i) {
    const int64_t l = dn.lhs_batch_dimensions[i], r = dn.rhs_batch_dimensions[i];
    if (lhs.dimensions(l) != rhs.dimensions(r)) return std::nullopt;
    s.batch_extent[i] = static_cast<uint32_t>(lhs.dimensions(l));
    s.lhs_batch_stride[i] = static_cast<uint32_t>(lhs_strides[static_cast<size_t>(l)]);
    s.rhs_batch_stride[i] = static_cast<uint32_t>(rhs_strides[static_cast<size_t>(r)]);
    s.batch *= s.batch_extent[i];
  }
  const int64_t lhs_k = dn.lhs_contracting_dimensions[0], rhs_k = dn.rhs_contracting_dimensions[0];
  if (rhs.dimensions(rhs_k) != lhs.dimensions(lhs_k)) return std::nullopt;
  const int64_t m = lhs.dimensions(*lhs_free), n = rhs.dimensions(*rhs_free), k = lhs.dimensions(lhs_k);
  if (m < kMinimumExtent || n < kMinimumExtent || k < kMinimumExtent) return std::nullopt;
  s.m = static_cast<uint32_t>(m);
  s.n = static_cast<uint32_t>(n);
  s.k = static_cast<uint32_t>(k);
  s.lhs_m_stride = static_cast<uint32_t>(lhs_strides[static_cast<size_t>(*lhs_free)]);
  s.lhs_k_stride = static_cast<uint32_t>(lhs_strides[static_cast<size_t>(lhs_k)]);
  s.rhs_n_stride = static_cast<uint32_t>(rhs_strides[static_cast<size_t>(*rhs_free)]);
  s.rhs_k_stride = static_cast<uint32_t>(rhs_strides[static_cast<size_t>(rhs_k)]);
  plan.lhs_along_k = s.lhs_k_stride == 1 && s.lhs_m_stride != 1;
  plan.rhs_along_n = !(s.rhs_k_stride == 1 && s.rhs_n_stride != 1);
  const std::optional<GemmTiles> tiles = ChooseGemmTiles(n, features);
  if (!tiles.has_value()) return std::nullopt;
  plan.tiles = *tiles;
  plan.groups = (m + plan.tiles.bm - 1) / plan.tiles.bm * ((n + plan.tiles.bn - 1) / plan.tiles.bn) * s.batch;
  if (!DotFits32(plan.groups + std::numeric_limits<uint16_t>::max())) return std::nullopt;
  return plan;
}

std::optional<DotPlan> PlanKernelDot(const Computation& kernel, const ShaderFeatures& features) {
  const Instruction* root = kernel.root();
  if (root == nullptr || root->opcode != Opcode::kDot || kernel.parameters().size() != 2 ||
      root->operands.size() != 2 || root->operand(0) != kernel.parameters()[0] ||
      root->operand(1) != kernel.parameters()[1])
    return std::nullopt;
  return PlanDot(*root, features);
}

}  // namespace kiln::vulkan
