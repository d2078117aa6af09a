#include "backends/vulkan/glsl_bitonic_sort.h"

#include <algorithm>

#include "core/int_math.h"
#include "core/lowering/bitonic_sort.h"

namespace kiln::vulkan {
namespace {

// The shader's modes (push constant `mode`): BitonicLaunchMode's numbers.
constexpr int64_t kBitonicSortTilesMode = static_cast<int64_t>(BitonicLaunchMode::kSortTiles);
constexpr int64_t kBitonicMergeAcrossMode = static_cast<int64_t>(BitonicLaunchMode::kMergeAcrossTiles);
constexpr int64_t kBitonicMergeWithinMode = static_cast<int64_t>(BitonicLaunchMode::kMergeWithinTiles);

// Invocations per workgroup are at most this many: every current GPU allows
// 1024, and a larger tile buys fewer passes only logarithmically.
constexpr int64_t kBitonicMaxWorkgroup = 1024;
// Without known limits: what every Vulkan device allows (128 invocations,
// 16 KiB of shared memory).
constexpr int64_t kBitonicFallbackTile = 128;

}  // namespace

int64_t BitonicDeviceTile(const ShaderFeatures& features, int64_t shared_bytes_per_element) {
  if (features.max_workgroup_size <= 0) return kBitonicFallbackTile;
  int64_t invocations = 1;
  while (invocations * 2 <= std::min<int64_t>(features.max_workgroup_size, kBitonicMaxWorkgroup))
    invocations *= 2;
  int64_t tile = 2 * invocations;
  const int64_t shared = features.max_shared_memory_bytes > 0 ? features.max_shared_memory_bytes : 16384;
  while (tile > 2 && tile * shared_bytes_per_element > shared) tile /= 2;
  return tile;
}

BitonicSortLayout PlanBitonicSort(int64_t rows, int64_t length, int64_t outputs,
                                  const ShaderFeatures& features, int64_t shared_bytes_per_element) {
  BitonicSortLayout layout;
  layout.rows = rows;
  layout.length = length;
  layout.outputs = outputs;
  layout.padded = BitonicPaddedLength(length);
  const int64_t device_tile = BitonicDeviceTile(features, shared_bytes_per_element);
  layout.tile = BitonicTile(layout.padded, device_tile);
  // A workgroup holds whole tiles: of one long row, or several short rows
  // (up to the device's tile), so short rows still fill a workgroup.
  const int64_t total = BitonicPaddedLength(std::max<int64_t>(1, rows) * layout.padded);
  layout.chunk = std::max(layout.tile, std::min(device_tile, total));
  layout.workgroup_size = layout.chunk / 2;
  return layout;
}

std::string BitonicSortGlobals(const BitonicSortLayout& layout) {
  return "layout(push_constant) uniform Pass { uint mode; uint block; uint stride; } k_pass;\n"
         "shared int k_order[" +
         std::to_string(layout.chunk) + "];\n";
}

std::string BitonicSortFunctions(const BitonicSortLayout& layout) {
  const std::string length = std::to_string(layout.length);
  return "// Whether the pair (x at place p, y further on) is to be swapped: the\n"
         "// first of the two goes first where (p & block) == 0, last elsewhere.\n"
         "bool k_swap(int k_row, int k_p, int k_x, int k_y, int k_block) {\n"
         "  int k_lo = min(k_x, k_y);\n"
         "  int k_hi = max(k_x, k_y);\n"
         "  bool k_hi_goes_first = k_hi < " +
         length +
         " && k_hi_first(k_row, k_lo, k_hi);\n"
         "  int k_first = k_hi_goes_first ? k_hi : k_lo;\n"
         "  return ((k_p & k_block) == 0) == (k_first != k_x);\n"
         "}\n" +
         // Rows of one element have no pass: nothing numbered them.
         (layout.padded == 1 ? std::string("int k_sorted(int k_row, int k_e) { return 0; }\n")
                             : "int k_sorted(int k_row, int k_e) { return k_scratch.d[k_row * " +
                                   std::to_string(layout.padded) + " + k_e]; }\n");
}

std::string BitonicSortMain(const BitonicSortLayout& layout, const std::string& gather) {
  if (layout.outputs == 0) return "void main() {}\n";
  const std::string padded = std::to_string(layout.padded);
  const std::string mask = std::to_string(layout.padded - 1);
  const std::string tile = std::to_string(layout.tile);
  const std::string chunk = std::to_string(layout.chunk);
  const std::string group = std::to_string(layout.workgroup_size);
  const int64_t total = layout.rows * layout.padded;
  const std::string elements = std::to_string(total);
  const std::string chunks = std::to_string(CeilDiv(total, layout.chunk));
  std::string text = "void main() {\n  int k_mode = int(k_pass.mode);\n";
  // Modes 0 and 2: a chunk of element numbers in shared memory, every
  // invocation one pair per step, a barrier after each step.
  text += "  if (k_mode == " + std::to_string(kBitonicSortTilesMode) +
          " || k_mode == " + std::to_string(kBitonicMergeWithinMode) +
          ") {\n"
          "    bool k_numbering = k_mode == " +
          std::to_string(kBitonicSortTilesMode) +
          ";\n"
          "    int k_t = int(gl_LocalInvocationID.x);\n"
          "    int k_first_block = k_numbering ? 2 : int(k_pass.block);\n"
          "    int k_last_block = k_numbering ? " +
          tile +
          " : int(k_pass.block);\n"
          "    for (int k_c = int(gl_WorkGroupID.x); k_c < " +
          chunks +
          "; k_c += int(gl_NumWorkGroups.x)) {\n"
          "      int k_start = k_c * " +
          chunk +
          ";\n"
          "      for (int k_l = k_t; k_l < " +
          chunk + "; k_l += " + group +
          ") {\n"
          "        int k_f = k_start + k_l;\n"
          "        if (k_f < " +
          elements + ") k_order[k_l] = k_numbering ? (k_f & " + mask +
          ") : k_scratch.d[k_f];\n"
          "      }\n"
          "      barrier();\n"
          "      for (int k_block = k_first_block; k_block <= k_last_block; k_block *= 2) {\n"
          "        for (int k_stride = min(k_block, " +
          tile +
          ") / 2; k_stride > 0; k_stride /= 2) {\n"
          "          int k_at = (k_t / k_stride) * 2 * k_stride + k_t % k_stride;\n"
          "          int k_f = k_start + k_at;\n"
          "          if (k_f < " +
          elements +
          ") {\n"
          "            int k_x = k_order[k_at];\n"
          "            int k_y = k_order[k_at + k_stride];\n"
          "            if (k_swap(k_f / " +
          padded + ", k_f & " + mask +
          ", k_x, k_y, k_block)) {\n"
          "              k_order[k_at] = k_y;\n"
          "              k_order[k_at + k_stride] = k_x;\n"
          "            }\n"
          "          }\n"
          "          barrier();\n"
          "        }\n"
          "      }\n"
          "      for (int k_l = k_t; k_l < " +
          chunk + "; k_l += " + group +
          ") {\n"
          "        int k_f = k_start + k_l;\n"
          "        if (k_f < " +
          elements +
          ") k_scratch.d[k_f] = k_order[k_l];\n"
          "      }\n"
          "      barrier();\n"
          "    }\n"
          "    return;\n"
          "  }\n";
  // Mode 1: one pair per invocation at distance `stride`, over the scratch.
  text += "  int k_step = int(gl_NumWorkGroups.x) * " + group +
          ";\n"
          "  if (k_mode == " +
          std::to_string(kBitonicMergeAcrossMode) +
          ") {\n"
          "    int k_stride = int(k_pass.stride);\n"
          "    int k_block = int(k_pass.block);\n"
          "    for (int k_q = int(gl_GlobalInvocationID.x); k_q < " +
          std::to_string(total / 2) +
          "; k_q += k_step) {\n"
          "      int k_f = (k_q / k_stride) * 2 * k_stride + k_q % k_stride;\n"
          "      int k_x = k_scratch.d[k_f];\n"
          "      int k_y = k_scratch.d[k_f + k_stride];\n"
          "      if (k_swap(k_f / " +
          padded + ", k_f & " + mask +
          ", k_x, k_y, k_block)) {\n"
          "        k_scratch.d[k_f] = k_y;\n"
          "        k_scratch.d[k_f + k_stride] = k_x;\n"
          "      }\n"
          "    }\n"
          "    return;\n"
          "  }\n";
  // Mode 3: the gather.
  text += "  for (int k_o = int(gl_GlobalInvocationID.x); k_o < " + std::to_string(layout.outputs) +
          "; k_o += k_step) {\n" + gather + "  }\n}\n";
  return text;
}

std::vector<KernelLaunch> BitonicSortDispatches(const BitonicSortLayout& layout) {
  BitonicLaunchPlan plan;
  plan.rows = layout.rows;
  plan.length = layout.length;
  plan.finish_iterations = layout.outputs;
  plan.tile = layout.tile;
  plan.tile_group_elements = layout.chunk;
  plan.group_size = layout.workgroup_size;
  plan.max_workgroups = kGlslMaxWorkgroups;
  return BitonicSortLaunches(plan);
}

int64_t BitonicSortLoopIterations(const BitonicSortLayout& layout,
                                  const std::vector<KernelLaunch>& dispatches, int64_t compare_loops) {
  const int64_t total = layout.rows * layout.padded;
  const int64_t log_tile = CeilLog2(layout.tile);
  const int64_t per_compare = 1 + std::max<int64_t>(0, compare_loops);
  int64_t most = 0;
  for (const KernelLaunch& dispatch : dispatches) {
    const int64_t workgroups = dispatch.grid.workgroups[0];
    if (workgroups <= 0) continue;
    const int64_t invocations = workgroups * layout.workgroup_size;
    int64_t trips = 0;
    switch (dispatch.parameters.at(0)) {
      case kBitonicSortTilesMode:
      case kBitonicMergeWithinMode: {
        // Blocks and their steps: the whole network up to the tile, or
        // one merge's steps within it.
        const int64_t steps = dispatch.parameters.at(0) == kBitonicSortTilesMode
                                  ? log_tile * (log_tile + 1) / 2 + log_tile
                                  : log_tile + 1;
        const int64_t per_chunk = 2 * (layout.chunk / layout.workgroup_size) + steps * per_compare + 1;
        trips = CeilDiv(CeilDiv(total, layout.chunk), workgroups) * per_chunk;
        break;
      }
      case kBitonicMergeAcrossMode: trips = CeilDiv(total / 2, invocations) * per_compare; break;
      default: trips = CeilDiv(layout.outputs, invocations); break;
    }
    most = std::max(most, trips);
  }
  return most;
}

}  // namespace kiln::vulkan
