#include "backends/vulkan/library_scatter.h"

#include <algorithm>
#include <limits>

#include "backends/vulkan/glsl_kernel_emitter.h"
#include "core/int_math.h"
#include "core/interpreter/called_computation.h"

namespace kiln::vulkan {
namespace {

// The shader's modes (push constant `mode`).
constexpr int64_t kScatterAddCopyMode = 0;
constexpr int64_t kScatterAddUpdateMode = 1;
// Invocations a workgroup at most: enough to hide a GPU's atomics' latency.
constexpr int64_t kScatterAddLargestWorkgroup = 256;

std::optional<LibraryShader> ScatterAddShaderFor(ElementType type, const ShaderFeatures& features) {
  switch (type) {
    case ElementType::kF32:
      if (!features.float32_atomic_add) return std::nullopt;
      return LibraryShader::kScatterAddF32;
    case ElementType::kS32:
    case ElementType::kU32: return LibraryShader::kScatterAddI32;
    default: return std::nullopt;
  }
}

// Whether the combiner is add(x, y) of its two scalar parameters of `type`.
bool CombinerAdds(const Instruction& scatter, ElementType type) {
  if (scatter.called.size() != 1 || scatter.called[0] == nullptr) return false;
  const Computation& combiner = *scatter.called[0];
  if (interpreter::SimpleBinaryComputation(combiner) != Opcode::kAdd) return false;
  for (const Instruction* parameter : combiner.parameters())
    if (parameter->shape.element_type() != type) return false;
  return true;
}

}  // namespace

std::vector<uint32_t> ScatterAddShape::Words() const { return {outputs, updates, window, rows}; }

std::optional<ScatterAddPlan> PlanScatterAdd(const Instruction& scatter, const ShaderFeatures& features) {
  if (scatter.opcode != Opcode::kScatter || scatter.operands.size() != 3 || !scatter.shape.IsArray())
    return std::nullopt;
  const Shape& operand = scatter.operand(0)->shape;
  const Shape& indices = scatter.operand(1)->shape;
  const Shape& updates = scatter.operand(2)->shape;
  if (!operand.IsArray() || !indices.IsArray() || !updates.IsArray()) return std::nullopt;
  const ElementType type = operand.element_type();
  const std::optional<LibraryShader> shader = ScatterAddShaderFor(type, features);
  if (!shader.has_value() || updates.element_type() != type || scatter.shape.element_type() != type ||
      !CombinerAdds(scatter, type))
    return std::nullopt;
  if (indices.element_type() != ElementType::kS32 && indices.element_type() != ElementType::kU32)
    return std::nullopt;

  // One index component, picking a row of the operand.
  const ScatterDimensionNumbers& dn = scatter.attrs.scatter;
  const int64_t rank = operand.rank();
  const int64_t index_rank = indices.rank();
  if (rank < 1 || !dn.input_batching_dims.empty() || !dn.scatter_indices_batching_dims.empty() ||
      dn.inserted_window_dims != std::vector<int64_t>{0} ||
      dn.scatter_dims_to_operand_dims != std::vector<int64_t>{0})
    return std::nullopt;
  int64_t scatter_rank = index_rank;
  if (dn.index_vector_dim == index_rank - 1 && indices.dimensions(index_rank - 1) == 1) {
    scatter_rank = index_rank - 1;
  } else if (dn.index_vector_dim != index_rank) {
    return std::nullopt;
  }
  // The updates: the indices' dimensions, then whole rows.
  if (updates.rank() != scatter_rank + rank - 1) return std::nullopt;
  for (int64_t d = 0; d < scatter_rank; ++d)
    if (updates.dimensions(d) != indices.dimensions(d)) return std::nullopt;
  if (static_cast<int64_t>(dn.update_window_dims.size()) != rank - 1) return std::nullopt;
  for (int64_t j = 0; j < rank - 1; ++j) {
    if (dn.update_window_dims[static_cast<size_t>(j)] != scatter_rank + j ||
        updates.dimensions(scatter_rank + j) != operand.dimensions(j + 1))
      return std::nullopt;
  }
  constexpr int64_t kMaxElements = std::numeric_limits<int32_t>::max();
  const int64_t rows = operand.dimensions(0);
  if (operand.element_count() == 0 || updates.element_count() == 0 ||
      operand.element_count() > kMaxElements || updates.element_count() > kMaxElements)
    return std::nullopt;

  ScatterAddPlan plan;
  plan.shader = *shader;
  plan.shape.outputs = static_cast<uint32_t>(operand.element_count());
  plan.shape.updates = static_cast<uint32_t>(updates.element_count());
  plan.shape.window = static_cast<uint32_t>(operand.element_count() / rows);
  plan.shape.rows = static_cast<uint32_t>(rows);
  // A power of two within the device's invocations: whole subgroups, which
  // are powers of two no larger.
  int64_t workgroup = 1;
  while (workgroup * 2 <= std::min(kScatterAddLargestWorkgroup, features.WorkgroupInvocationsOrMinimum()))
    workgroup *= 2;
  plan.workgroup_size = static_cast<uint32_t>(workgroup);
  for (const auto& [mode, count] :
       {std::pair<int64_t, int64_t>{kScatterAddCopyMode, operand.element_count()},
        std::pair<int64_t, int64_t>{kScatterAddUpdateMode, updates.element_count()}}) {
    KernelLaunch launch{LinearGrid(count, workgroup, kGlslMaxWorkgroups), {mode}};
    plan.loop_iterations =
        std::max(plan.loop_iterations, CeilDiv(count, launch.grid.workgroups[0] * workgroup));
    plan.launches.push_back(std::move(launch));
  }
  return plan;
}

std::optional<ScatterAddPlan> PlanKernelScatterAdd(const Computation& kernel,
                                                   const ShaderFeatures& features) {
  const Instruction* root = kernel.root();
  if (root == nullptr || root->opcode != Opcode::kScatter || kernel.parameters().size() != 3 ||
      root->operands.size() != 3)
    return std::nullopt;
  for (size_t k = 0; k < 3; ++k)
    if (root->operand(k) != kernel.parameters()[k]) return std::nullopt;
  return PlanScatterAdd(*root, features);
}

}  // namespace kiln::vulkan
