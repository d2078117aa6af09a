#include "backends/vulkan/library_kernels.h"

#include <algorithm>
#include <array>
#include <string>

#include "backends/vulkan/library_convolution.h"
#include "backends/vulkan/library_dot.h"
#include "backends/vulkan/library_scatter.h"
#include "backends/vulkan/library_sort.h"
#include "backends/vulkan/library_transpose.h"

namespace kiln::vulkan {
namespace {

std::string Words(const std::vector<uint32_t>& words) {
  std::string text;
  for (uint32_t word : words) text += (text.empty() ? "" : " ") + std::to_string(word);
  return text;
}

// A library kernel of `launches` (their parameters the shader's push
// constants, each the same number of words), every workgroup of
// `workgroup_size`, `buffers` its inputs, then its outputs, then its
// scratch when `scratch`, each invocation running at most `loops` loop
// iterations in any launch.
LibraryKernel Launches(std::string_view entry_name, LibraryShader shader,
                       std::vector<uint32_t> specialization, int inputs, int outputs, bool scratch,
                       uint32_t workgroup_size, std::vector<KernelLaunch> launches, int64_t loops) {
  LibraryKernel library{shader, std::move(specialization), {}};
  GlslKernel& kernel = library.description;
  kernel.name = std::string(entry_name);
  std::vector<uint32_t> first_words;
  if (!launches.empty())
    for (const int64_t word : launches.front().parameters) first_words.push_back(static_cast<uint32_t>(word));
  kernel.source = "// " + kernel.name + ": library shader " + std::string(LibraryShaderName(shader)) +
                  ", specialization constants " + std::to_string(workgroup_size) + " " +
                  Words(library.specialization) +
                  (launches.size() == 1 ? "" : ", " + std::to_string(launches.size()) + " launches") +
                  (launches.size() == 1 ? ", push constants " : ", the first's push constants ") +
                  Words(first_words) + "\n";
  kernel.input_count = inputs;
  kernel.output_count = outputs;
  kernel.has_scratch = scratch;
  kernel.binding_count = inputs + outputs + (scratch ? 1 : 0);
  kernel.push_constant_bytes = static_cast<int>(first_words.size() * sizeof(uint32_t));
  kernel.workgroup_size = workgroup_size;
  for (const KernelLaunch& launch : launches)
    kernel.invocations = std::max(kernel.invocations, launch.grid.iterations);
  kernel.max_loop_iterations = loops;
  kernel.loop_op = kernel.name;
  kernel.launches = std::move(launches);
  return library;
}

// A library kernel of one launch over `workgroups` of `workgroup_size`,
// `push_words` its push constants, each invocation running
// `loops_per_group` loop iterations for each of the `trips` workgroups'
// work it takes, `buffers` its inputs and then its one output.
LibraryKernel OneLaunch(std::string_view entry_name, LibraryShader shader,
                        std::vector<uint32_t> specialization, int buffers,
                        const std::array<int64_t, 3>& workgroups, int64_t trips, uint32_t workgroup_size,
                        const std::vector<uint32_t>& push_words, int64_t loops_per_group) {
  KernelLaunch launch;
  launch.grid.workgroups = workgroups;
  launch.grid.workgroup_size = {workgroup_size, 1, 1};
  launch.grid.iterations = launch.grid.invocations();
  launch.parameters.assign(push_words.begin(), push_words.end());
  return Launches(entry_name, shader, std::move(specialization), buffers - 1, 1, false, workgroup_size,
                  {std::move(launch)}, trips * (1 + loops_per_group));
}

std::optional<LibraryKernel> PlanAny(const Computation& kernel, const ShaderFeatures& features,
                                     std::string_view entry_name) {
  if (std::optional<TransposePlan> plan = PlanKernelTranspose(kernel, features)) {
    // Per tile: the outer dimensions' loop, then the tile's rows read and written.
    const int64_t loops = TransposeShape::kMaxOuter + 2 * ((plan->tile + plan->rows - 1) / plan->rows);
    return OneLaunch(entry_name, plan->shader, {plan->tile, plan->rows}, 2, plan->workgroups, 1,
                     plan->workgroup_size(), plan->shape.Words(), loops);
  }
  if (std::optional<ConvolutionPlan> plan = PlanKernelConvolution(kernel, features)) {
    // At most kGlslMaxWorkgroups along x, the shader striding over the rest.
    const int64_t launched = std::min(plan->groups, kGlslMaxWorkgroups);
    return OneLaunch(entry_name, plan->shader, plan->specialization(), 3, {launched, 1, 1},
                     (plan->groups + launched - 1) / launched, plan->tiles.workgroup_size(),
                     plan->shape.Words(), plan->loops_per_tile());
  }
  if (std::optional<DotPlan> plan = PlanKernelDot(kernel, features)) {
    const int64_t launched = std::min(plan->groups, kGlslMaxWorkgroups);
    return OneLaunch(entry_name, LibraryShader::kTiledDot, plan->specialization(), 3, {launched, 1, 1},
                     (plan->groups + launched - 1) / launched, plan->tiles.workgroup_size(),
                     plan->shape.Words(), plan->loops_per_tile());
  }
  if (std::optional<SortPlan> plan = PlanKernelSort(kernel, features)) {
    // The outputs are the operands sorted; the scratch holds the order.
    return Launches(entry_name, plan->shader, plan->specialization(), plan->operands, plan->operands, true,
                    static_cast<uint32_t>(plan->layout.workgroup_size), std::move(plan->launches),
                    plan->loop_iterations);
  }
  if (std::optional<ScatterAddPlan> plan = PlanKernelScatterAdd(kernel, features)) {
    return Launches(entry_name, plan->shader, plan->shape.Words(), 3, 1, false, plan->workgroup_size,
                    std::move(plan->launches), plan->loop_iterations);
  }
  return std::nullopt;
}

}  // namespace

std::optional<LibraryKernel> PlanLibraryKernel(const Computation& kernel, const ShaderFeatures& features,
                                               std::string_view entry_name) {
  std::optional<LibraryKernel> library = PlanAny(kernel, features, entry_name);
  // Past the device's loop limit (lavapipe's 65535) the elemental kernel,
  // whose loops are shorter per invocation, takes it.
  if (library.has_value() && features.max_loop_iterations > 0 &&
      library->description.max_loop_iterations > features.max_loop_iterations)
    return std::nullopt;
  return library;
}

}  // namespace kiln::vulkan
