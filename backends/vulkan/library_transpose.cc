#include "backends/vulkan/library_transpose.h"

#include <algorithm>
#include <limits>

namespace kiln::vulkan {
namespace {

// The largest tile edge and the rows of it a workgroup covers in one pass
// (256 invocations either way) where the device allows. On a GPU, 32 x 32
// elements a group, a row of 32 one memory transaction. On a CPU device
// (lavapipe) a workgroup is one thread stepping through its invocations,
// whose start and barrier a tile must amortise: a 2048 x 2048 f32
// transpose took 22.7 ms with 64 x 64 tiles in passes of 4 rows, 65.9 ms
// with 32 x 32 in passes of 8, 53.1 ms elemental (medians, load 2.5).
constexpr uint32_t kLargestGpuTile = 32;
constexpr uint32_t kGpuRows = 8;
constexpr uint32_t kLargestCpuTile = 64;
constexpr uint32_t kCpuRows = 4;
// What every Vulkan device takes as a dispatch's workgroup count along x
// (the specification's minimum of maxComputeWorkGroupCount).
constexpr int64_t kMinimumWorkgroupCount = 65535;

struct CollapsedTranspose {
  std::vector<int64_t> dimensions;   // the input's, merged
  std::vector<int64_t> permutation;  // output dimension i is input dimension permutation[i]
};

// Drops unit dimensions and merges runs of input dimensions that stay
// neighbours in the output: the same movement of elements over fewer
// dimensions.
CollapsedTranspose CollapseTranspose(const std::vector<int64_t>& dimensions,
                                     const std::vector<int64_t>& permutation) {
  std::vector<int64_t> kept_output;  // input dimensions in output order, unit ones dropped
  for (int64_t input : permutation)
    if (dimensions[static_cast<size_t>(input)] != 1) kept_output.push_back(input);
  // Runs of output dimensions whose input dimensions are consecutive.
  std::vector<std::pair<int64_t, int64_t>> runs;  // first and last input dimension
  for (int64_t input : kept_output) {
    if (!runs.empty()) {
      // The next kept input dimension after the run's last one.
      int64_t next = runs.back().second + 1;
      while (next < static_cast<int64_t>(dimensions.size()) && dimensions[static_cast<size_t>(next)] == 1)
        ++next;
      if (next == input) {
        runs.back().second = input;
        continue;
      }
    }
    runs.emplace_back(input, input);
  }
  std::vector<std::pair<int64_t, int64_t>> by_input = runs;
  std::sort(by_input.begin(), by_input.end());
  CollapsedTranspose collapsed;
  for (const auto& [first, last] : by_input) {
    int64_t extent = 1;
    for (int64_t d = first; d <= last; ++d) extent *= dimensions[static_cast<size_t>(d)];
    collapsed.dimensions.push_back(extent);
  }
  for (const auto& run : runs)
    collapsed.permutation.push_back(std::find(by_input.begin(), by_input.end(), run) - by_input.begin());
  return collapsed;
}

std::optional<LibraryShader> TransposeShaderFor(int element_bytes, const ShaderFeatures& features) {
  switch (element_bytes) {
    case 1:
      if (!features.storage8) return std::nullopt;
      return LibraryShader::kTranspose1;
    case 2:
      if (!features.storage16) return std::nullopt;
      return LibraryShader::kTranspose2;
    case 4: return LibraryShader::kTranspose4;
    case 8: return LibraryShader::kTranspose8;
    case 16: return LibraryShader::kTranspose16;
    default: return std::nullopt;
  }
}

int64_t Tiles(int64_t extent, uint32_t tile) { return (extent + tile - 1) / tile; }

}  // namespace

std::vector<uint32_t> TransposeShape::Words() const {
  std::vector<uint32_t> words{extent_a, extent_b, in_stride_a, out_stride_b, outer_count};
  words.insert(words.end(), outer_extent.begin(), outer_extent.end());
  words.insert(words.end(), outer_in_stride.begin(), outer_in_stride.end());
  words.insert(words.end(), outer_out_stride.begin(), outer_out_stride.end());
  return words;
}

std::optional<TransposePlan> PlanTranspose(const std::vector<int64_t>& dimensions,
                                           const std::vector<int64_t>& permutation, int element_bytes,
                                           const ShaderFeatures& features) {
  if (permutation.size() != dimensions.size()) return std::nullopt;
  const std::optional<LibraryShader> shader = TransposeShaderFor(element_bytes, features);
  if (!shader.has_value()) return std::nullopt;
  int64_t elements = 1;
  for (int64_t extent : dimensions) {
    if (extent <= 0 || extent > std::numeric_limits<uint32_t>::max() / elements) return std::nullopt;
    elements *= extent;
  }
  const CollapsedTranspose collapsed = CollapseTranspose(dimensions, permutation);
  const auto rank = static_cast<int64_t>(collapsed.dimensions.size());
  if (rank < 2 || collapsed.permutation.back() == rank - 1) return std::nullopt;
  if (rank - 2 > TransposeShape::kMaxOuter) return std::nullopt;

  std::vector<int64_t> in_strides(static_cast<size_t>(rank), 1), out_strides(static_cast<size_t>(rank), 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    in_strides[static_cast<size_t>(d)] =
        in_strides[static_cast<size_t>(d + 1)] * collapsed.dimensions[static_cast<size_t>(d + 1)];
  int64_t stride = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    const auto input = static_cast<size_t>(collapsed.permutation[static_cast<size_t>(i)]);
    out_strides[input] = stride;
    stride *= collapsed.dimensions[input];
  }

  TransposePlan plan;
  plan.shader = *shader;
  // The tile, padded by a column, as large as shared memory holds; narrow
  // elements are staged as 32-bit words.
  const int64_t shared_bytes = features.SharedMemoryBytesOrMinimum();
  const int64_t staged_bytes = std::max(element_bytes, 4);
  plan.tile = features.cpu_device ? kLargestCpuTile : kLargestGpuTile;
  while (plan.tile > 1 && plan.tile * (plan.tile + 1) * staged_bytes > shared_bytes) plan.tile /= 2;
  const int64_t invocations = features.WorkgroupInvocationsOrMinimum();
  plan.rows = std::min(features.cpu_device ? kCpuRows : kGpuRows, plan.tile);
  while (plan.workgroup_size() > invocations) {
    if (plan.rows > 1) {
      plan.rows /= 2;
    } else {
      plan.tile /= 2;
    }
  }
  // Whole subgroups: a workgroup that is not a multiple of the subgroup
  // size leaves lanes of its last one idle.
  const auto subgroup = static_cast<uint32_t>(std::max(features.subgroup_size, 0));
  while (subgroup > 0 && plan.workgroup_size() % subgroup != 0 && plan.rows * 2 <= plan.tile &&
         plan.workgroup_size() * 2 <= invocations)
    plan.rows *= 2;

  const auto a = static_cast<size_t>(collapsed.permutation.back());
  const auto b = static_cast<size_t>(rank - 1);
  TransposeShape& shape = plan.shape;
  shape.extent_a = static_cast<uint32_t>(collapsed.dimensions[a]);
  shape.extent_b = static_cast<uint32_t>(collapsed.dimensions[b]);
  shape.in_stride_a = static_cast<uint32_t>(in_strides[a]);
  shape.out_stride_b = static_cast<uint32_t>(out_strides[b]);
  int64_t planes = 1;
  for (size_t d = 0; d < static_cast<size_t>(rank); ++d) {
    if (d == a || d == b) continue;
    const size_t outer = shape.outer_count++;
    shape.outer_extent[outer] = static_cast<uint32_t>(collapsed.dimensions[d]);
    shape.outer_in_stride[outer] = static_cast<uint32_t>(in_strides[d]);
    shape.outer_out_stride[outer] = static_cast<uint32_t>(out_strides[d]);
    planes *= collapsed.dimensions[d];
  }
  plan.workgroups = {Tiles(shape.extent_b, plan.tile), Tiles(shape.extent_a, plan.tile), planes};
  for (const int64_t count : plan.workgroups)
    if (count > kMinimumWorkgroupCount) return std::nullopt;
  return plan;
}

std::optional<TransposePlan> PlanKernelTranspose(const Computation& kernel, const ShaderFeatures& features) {
  const Instruction* root = kernel.root();
  if (root == nullptr || root->opcode != Opcode::kTranspose || kernel.parameters().size() != 1 ||
      root->operands.size() != 1 || root->operand(0) != kernel.parameters()[0])
    return std::nullopt;
  const Shape& input = root->operand(0)->shape;
  if (!input.IsArray() || !root->shape.IsArray()) return std::nullopt;
  return PlanTranspose(input.dimensions(), root->attrs.dimensions, ByteWidth(input.element_type()), features);
}

}  // namespace kiln::vulkan
