#include "backends/vulkan/glsl_tiled_dot.h"

#include <algorithm>

#include "backends/vulkan/glsl_kernel_emitter.h"

namespace kiln::vulkan {
namespace {

constexpr int64_t kTile = 64;      // output rows and columns per workgroup
constexpr int64_t kDepth = 8;      // contraction steps per shared tile
constexpr int64_t kPerThread = 8;  // rows and columns per invocation
static_assert((kTile / kPerThread) * (kTile / kPerThread) == kGlslWorkgroupSize);
static_assert(kTile * kDepth % kGlslWorkgroupSize == 0);
constexpr int64_t kMinimumExtent = 32;

std::vector<int64_t> RowMajorStrides(const Shape& shape) {
  std::vector<int64_t> strides(static_cast<size_t>(shape.rank()), 1);
  for (int64_t d = shape.rank() - 2; d >= 0; --d)
    strides[static_cast<size_t>(d)] = strides[static_cast<size_t>(d + 1)] * shape.dimensions(d + 1);
  return strides;
}

// The one dimension of `shape` that is neither batch nor contracting.
std::optional<int64_t> FreeDimension(const Shape& shape, const std::vector<int64_t>& batch,
                                     const std::vector<int64_t>& contracting) {
  std::optional<int64_t> free;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (std::find(batch.begin(), batch.end(), d) != batch.end()) continue;
    if (std::find(contracting.begin(), contracting.end(), d) != contracting.end()) continue;
    if (free.has_value()) return std::nullopt;
    free = d;
  }
  return free;
}

std::string I(int64_t value) { return std::to_string(value); }

}  // namespace

std::optional<TiledDotPlan> PlanTiledDot(const Instruction& dot) {
  if (dot.opcode != Opcode::kDot || dot.operands.size() != 2) return std::nullopt;
  const Shape& lhs = dot.operand(0)->shape;
  const Shape& rhs = dot.operand(1)->shape;
  if (!lhs.IsArray() || !rhs.IsArray() || !dot.shape.IsArray()) return std::nullopt;
  if (lhs.element_type() != ElementType::kF32 || rhs.element_type() != ElementType::kF32 ||
      dot.shape.element_type() != ElementType::kF32)
    return std::nullopt;
  const DotDimensionNumbers& dn = dot.attrs.dot;
  if (dn.lhs_contracting_dimensions.size() != 1 || dn.rhs_contracting_dimensions.size() != 1 ||
      dn.lhs_batch_dimensions.size() != dn.rhs_batch_dimensions.size())
    return std::nullopt;
  const std::optional<int64_t> lhs_free =
      FreeDimension(lhs, dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions);
  const std::optional<int64_t> rhs_free =
      FreeDimension(rhs, dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions);
  const size_t batch_rank = dn.lhs_batch_dimensions.size();
  if (!lhs_free.has_value() || !rhs_free.has_value() ||
      dot.shape.rank() != static_cast<int64_t>(batch_rank) + 2)
    return std::nullopt;

  TiledDotPlan plan;
  const std::vector<int64_t> lhs_strides = RowMajorStrides(lhs);
  const std::vector<int64_t> rhs_strides = RowMajorStrides(rhs);
  for (size_t i = 0; i < batch_rank; ++i) {
    const int64_t l = dn.lhs_batch_dimensions[i], r = dn.rhs_batch_dimensions[i];
    if (lhs.dimensions(l) != rhs.dimensions(r)) return std::nullopt;
    plan.batch_dimensions.push_back(
        {lhs.dimensions(l), lhs_strides[static_cast<size_t>(l)], rhs_strides[static_cast<size_t>(r)]});
    plan.batch *= lhs.dimensions(l);
  }
  const int64_t lhs_k = dn.lhs_contracting_dimensions[0], rhs_k = dn.rhs_contracting_dimensions[0];
  plan.m = lhs.dimensions(*lhs_free);
  plan.n = rhs.dimensions(*rhs_free);
  plan.k = lhs.dimensions(lhs_k);
  if (rhs.dimensions(rhs_k) != plan.k) return std::nullopt;
  if (plan.m < kMinimumExtent || plan.n < kMinimumExtent || plan.k < kMinimumExtent) return std::nullopt;
  plan.lhs_m_stride = lhs_strides[static_cast<size_t>(*lhs_free)];
  plan.lhs_k_stride = lhs_strides[static_cast<size_t>(lhs_k)];
  plan.rhs_n_stride = rhs_strides[static_cast<size_t>(*rhs_free)];
  plan.rhs_k_stride = rhs_strides[static_cast<size_t>(rhs_k)];
  plan.tiles_m = (plan.m + kTile - 1) / kTile;
  plan.tiles_n = (plan.n + kTile - 1) / kTile;
  plan.invocations = plan.batch * plan.tiles_m * plan.tiles_n * kGlslWorkgroupSize;
  return plan;
}

std::string TiledDotGlobals() {
  // [depth][row] and [depth][column]: an invocation's eight rows (columns)
  // at one depth are adjacent.
  return "shared float k_lhs_tile[" + I(kDepth * kTile) + "];\nshared float k_rhs_tile[" + I(kDepth * kTile) +
         "];\n";
}

std::string TiledDotBody(const TiledDotPlan& plan, int lhs, int rhs, int out) {
  const std::string group = I(kGlslWorkgroupSize);
  std::string s;
  auto line = [&s](const std::string& text) { s += "    " + text + "\n"; };
  line("int k_tile = k_i / " + group + ";");
  line("int k_t = k_i % " + group + ";");
  line("int k_n0 = (k_tile % " + I(plan.tiles_n) + ") * " + I(kTile) + ";");
  line("int k_m0 = ((k_tile / " + I(plan.tiles_n) + ") % " + I(plan.tiles_m) + ") * " + I(kTile) + ";");
  line("int k_batch = k_tile / " + I(plan.tiles_n * plan.tiles_m) + ";");
  // The batch's element offsets in each operand, last batch dimension first.
  line("int k_lhs_base = 0;");
  line("int k_rhs_base = 0;");
  line("int k_rest = k_batch;");
  for (auto it = plan.batch_dimensions.rbegin(); it != plan.batch_dimensions.rend(); ++it) {
    line("k_lhs_base += (k_rest % " + I(it->extent) + ") * " + I(it->lhs_stride) + ";");
    line("k_rhs_base += (k_rest % " + I(it->extent) + ") * " + I(it->rhs_stride) + ";");
    line("k_rest /= " + I(it->extent) + ";");
  }
  line("int k_row = (k_t / " + I(kTile / kPerThread) + ") * " + I(kPerThread) + ";");
  line("int k_col = (k_t % " + I(kTile / kPerThread) + ") * " + I(kPerThread) + ";");
  for (int64_t i = 0; i < kPerThread; ++i)
    for (int64_t j = 0; j < kPerThread; ++j) line("float k_acc" + I(i) + "_" + I(j) + " = 0.0;");

  // Loading a 64 x 8 tile: element e of the tile goes to (depth, row); when
  // the operand is contiguous along the contraction, neighbouring
  // invocations take neighbouring depths, else neighbouring rows, so that
  // their reads are adjacent in memory.
  auto load = [&](const std::string& tile, int buffer, const std::string& base, const std::string& origin,
                  int64_t extent, int64_t row_stride, int64_t k_stride) {
    const bool along_k = k_stride == 1 && row_stride != 1;
    for (int64_t l = 0; l < kTile * kDepth / kGlslWorkgroupSize; ++l) {
      const std::string e = "(k_t + " + I(l * kGlslWorkgroupSize) + ")";
      const std::string d = along_k ? e + " % " + I(kDepth) : e + " / " + I(kTile);
      const std::string r = along_k ? e + " / " + I(kDepth) : e + " % " + I(kTile);
      line("{");
      line("  int k_d = " + d + ";");
      line("  int k_r = " + r + ";");
      line("  int k_kk = k_k0 + k_d;");
      line("  int k_rr = " + origin + " + k_r;");
      line("  " + tile + "[k_d * " + I(kTile) + " + k_r] = (k_rr < " + I(extent) + " && k_kk < " + I(plan.k) +
           ") ? b" + std::to_string(buffer) + ".d[" + base + " + k_rr * " + I(row_stride) + " + k_kk * " +
           I(k_stride) + "] : 0.0;");
      line("}");
    }
  };
  line("for (int k_k0 = 0; k_k0 < " + I(plan.k) + "; k_k0 += " + I(kDepth) + ") {");
  load("k_lhs_tile", lhs, "k_lhs_base", "k_m0", plan.m, plan.lhs_m_stride, plan.lhs_k_stride);
  load("k_rhs_tile", rhs, "k_rhs_base", "k_n0", plan.n, plan.rhs_n_stride, plan.rhs_k_stride);
  line("  barrier();");
  // A contraction step past k adds products of zeros: the sum is unchanged
  // (x + 0 == x for every x but -0, which a sum starting at +0 never is).
  for (int64_t d = 0; d < kDepth; ++d) {
    line("  {");
    for (int64_t i = 0; i < kPerThread; ++i)
      line("    float k_a" + I(i) + " = k_lhs_tile[" + I(d * kTile) + " + k_row + " + I(i) + "];");
    for (int64_t j = 0; j < kPerThread; ++j)
      line("    float k_b" + I(j) + " = k_rhs_tile[" + I(d * kTile) + " + k_col + " + I(j) + "];");
    for (int64_t i = 0; i < kPerThread; ++i)
      for (int64_t j = 0; j < kPerThread; ++j) {
        const std::string acc = "k_acc" + I(i) + "_" + I(j);
        line("    " + acc + " = " + acc + " + k_a" + I(i) + " * k_b" + I(j) + ";");
      }
    line("  }");
  }
  line("  barrier();");
  line("}");
  const std::string out_base = "k_batch * " + I(plan.m * plan.n);
  for (int64_t i = 0; i < kPerThread; ++i) {
    for (int64_t j = 0; j < kPerThread; ++j) {
      line("if (k_m0 + k_row + " + I(i) + " < " + I(plan.m) + " && k_n0 + k_col + " + I(j) + " < " +
           I(plan.n) + ") b" + std::to_string(out) + ".d[" + out_base + " + (k_m0 + k_row + " + I(i) +
           ") * " + I(plan.n) + " + k_n0 + k_col + " + I(j) + "] = k_acc" + I(i) + "_" + I(j) + ";");
    }
  }
  return s;
}

int64_t TiledDotLoopTrips(const TiledDotPlan& plan) { return (plan.k + kDepth - 1) / kDepth; }

}  // namespace kiln::vulkan
