#include "backends/vulkan/glsl_serial_sort.h"

#include <algorithm>
#include <limits>

#include "core/int_math.h"

namespace kiln::vulkan {
namespace {

// The shader's modes (push constant `mode`); 3 is the gather, as in the
// bitonic shader.
constexpr uint32_t kSerialSortRowsMode = 4;
constexpr uint32_t kSerialGatherMode = 3;

// The longest row sorted serially on a CPU device. On lavapipe the merge
// sort won at every length it can run (4096 is the longest whose loops stay
// under lavapipe's 65535 iterations an invocation): [64,4096] 204 ms
// against 516 ms for the network, [64,256] 8.4 against 11.9 ms, [16,4096]
// 51 against 179 ms; a single row is a tie (benchmarks/RESULTS.md, "The
// vulkan sort on a CPU device").
constexpr int64_t kSerialSortMaxLength = 4096;

// Loop iterations of one row's sort: numbering, then per pass the pass,
// its merges and their outputs (each output one compare).
int64_t SerialRowIterations(int64_t length, int64_t compare_loops) {
  const int64_t passes = CeilLog2(length);  // merge passes of a row
  int64_t merges = 0;
  for (int64_t width = 1; width < length; width *= 2) merges += CeilDiv(length, 2 * width);
  return length + passes + merges + passes * length * (1 + std::max<int64_t>(0, compare_loops));
}

int64_t SerialWorkgroupSize(const ShaderFeatures& features) {
  return features.subgroup_size > 0 ? features.subgroup_size : kGlslWorkgroupSize;
}

}  // namespace

bool SortsRowsSerially(const ShaderFeatures& features, int64_t rows, int64_t length) {
  if (!features.cpu_device || length > kSerialSortMaxLength) return false;
  if (2 * rows * length > std::numeric_limits<int32_t>::max()) return false;
  if (features.max_loop_iterations <= 0) return true;
  const SerialSortLayout layout = PlanSerialSort(rows, length, rows * length, features);
  return SerialSortLoopIterations(layout, SerialSortDispatches(layout), 0) <= features.max_loop_iterations;
}

SerialSortLayout PlanSerialSort(int64_t rows, int64_t length, int64_t outputs,
                                const ShaderFeatures& features) {
  SerialSortLayout layout;
  layout.rows = rows;
  layout.length = length;
  layout.outputs = outputs;
  layout.workgroup_size = SerialWorkgroupSize(features);
  return layout;
}

int64_t SerialSortScratchBytes(int64_t rows, int64_t length) {
  return std::max<int64_t>(2 * rows * length * 4, 4);
}

std::string SerialSortGlobals() { return "layout(push_constant) uniform Pass { uint mode; } k_pass;\n"; }

std::string SerialSortFunctions(const SerialSortLayout& layout) {
  const std::string n = std::to_string(layout.length);
  const std::string region = std::to_string(layout.rows * layout.length);
  // An odd number of passes leaves the order in the second region.
  const std::string sorted_at = CeilLog2(layout.length) % 2 == 0 ? "0" : region;
  return "void k_sort_row(int k_row) {\n"
         "  int k_src = k_row * " +
         n +
         ";\n"
         "  int k_dst = " +
         region + " + k_row * " + n +
         ";\n"
         "  for (int k_e = 0; k_e < " +
         n +
         "; ++k_e) k_scratch.d[k_src + k_e] = k_e;\n"
         "  for (int k_w = 1; k_w < " +
         n +
         "; k_w *= 2) {\n"
         "    for (int k_l = 0; k_l < " +
         n +
         "; k_l += 2 * k_w) {\n"
         "      int k_m = min(k_l + k_w, " +
         n +
         ");\n"
         "      int k_r = min(k_l + 2 * k_w, " +
         n +
         ");\n"
         "      int k_a = k_l;\n"
         "      int k_b = k_m;\n"
         "      for (int k_o = k_l; k_o < k_r; ++k_o) {\n"
         "        bool k_take_b = k_a >= k_m;\n"
         "        if (k_a < k_m && k_b < k_r)\n"
         "          k_take_b = k_hi_first(k_row, k_scratch.d[k_src + k_a], k_scratch.d[k_src + k_b]);\n"
         "        if (k_take_b) {\n"
         "          k_scratch.d[k_dst + k_o] = k_scratch.d[k_src + k_b];\n"
         "          ++k_b;\n"
         "        } else {\n"
         "          k_scratch.d[k_dst + k_o] = k_scratch.d[k_src + k_a];\n"
         "          ++k_a;\n"
         "        }\n"
         "      }\n"
         "    }\n"
         "    int k_t = k_src;\n"
         "    k_src = k_dst;\n"
         "    k_dst = k_t;\n"
         "  }\n"
         "}\n"
         "int k_sorted(int k_row, int k_e) { return k_scratch.d[" +
         sorted_at + " + k_row * " + n + " + k_e]; }\n";
}

std::string SerialSortMain(const SerialSortLayout& layout, const std::string& gather) {
  if (layout.outputs == 0) return "void main() {}\n";
  return "void main() {\n"
         "  int k_step = int(gl_NumWorkGroups.x) * " +
         std::to_string(layout.workgroup_size) +
         ";\n"
         "  if (k_pass.mode == " +
         std::to_string(kSerialSortRowsMode) +
         "u) {\n"
         "    for (int k_row = int(gl_GlobalInvocationID.x); k_row < " +
         std::to_string(layout.rows) +
         "; k_row += k_step) k_sort_row(k_row);\n"
         "    return;\n"
         "  }\n"
         "  for (int k_o = int(gl_GlobalInvocationID.x); k_o < " +
         std::to_string(layout.outputs) + "; k_o += k_step) {\n" + gather + "  }\n}\n";
}

std::vector<KernelLaunch> SerialSortDispatches(const SerialSortLayout& layout) {
  const auto launch = [&](uint32_t mode, int64_t items) {
    return KernelLaunch{LinearGrid(items, layout.workgroup_size, kGlslMaxWorkgroups), {mode}};
  };
  if (layout.outputs == 0) return {launch(kSerialGatherMode, 0)};
  return {launch(kSerialSortRowsMode, layout.rows), launch(kSerialGatherMode, layout.outputs)};
}

int64_t SerialSortLoopIterations(const SerialSortLayout& layout, const std::vector<KernelLaunch>& dispatches,
                                 int64_t compare_loops) {
  int64_t most = 0;
  for (const KernelLaunch& dispatch : dispatches) {
    if (dispatch.grid.workgroups[0] <= 0) continue;
    const int64_t invocations = dispatch.grid.workgroups[0] * layout.workgroup_size;
    const int64_t trips =
        dispatch.parameters.at(0) == kSerialSortRowsMode
            ? CeilDiv(layout.rows, invocations) * (1 + SerialRowIterations(layout.length, compare_loops))
            : CeilDiv(layout.outputs, invocations);
    most = std::max(most, trips);
  }
  return most;
}

}  // namespace kiln::vulkan
