#include "backends/vulkan/glsl_whole_loop.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backends/vulkan/glsl_types.h"

namespace kiln::vulkan {
namespace {

// The buffer blocks of a loop shader: one per pointer and element type the
// steps use it as. A slot's kernels read and write it in its own type, a
// copy in words of the size it allows; blocks of one binding alias, which
// Vulkan allows for storage buffers.
class LoopShaderBuffers {
 public:
  // The block for pointer `pointer` seen as an array of `storage` (a GLSL
  // storage type).
  std::string Name(int pointer, const std::string& storage) {
    const std::string name = "l" + std::to_string(pointer) + "_" + storage;
    blocks_.emplace(std::make_pair(pointer, storage), name);
    return name;
  }

  // Every block is coherent: a step's invocations read what others wrote
  // in the step before, across the barrier.
  std::string Declarations() const {
    std::string text =
        "layout(push_constant) uniform Budget { uint max_trips; } k_budget;\n"
        "layout(std430, set = 0, binding = 0) coherent buffer Status { uint d[]; } k_status;\n";
    for (const auto& [key, name] : blocks_) {
      text += "layout(std430, set = 0, binding = " + std::to_string(key.first + 1) + ") coherent buffer L" +
              name + " { " + key.second + " d[]; } " + name + ";\n";
    }
    return text;
  }

 private:
  std::map<std::pair<int, std::string>, std::string> blocks_;
};

// `body` run for k_g = the invocation's index, then every workgroup size
// further, below `count`.
std::string WorkgroupStrided(int64_t count, const std::string& body) {
  return "  for (uint k_g = gl_LocalInvocationID.x; k_g < " + std::to_string(count) +
         "u; k_g += gl_WorkGroupSize.x) {\n" + body + "  }\n";
}

// After each step: what it wrote is seen by every invocation of the
// workgroup, and none starts the next step before all finished this one.
constexpr const char* kLoopStepBarrier = "    memoryBarrierBuffer();\n    barrier();\n";

int64_t CeilDivide(int64_t a, int64_t b) { return (a + b - 1) / b; }

// What a loop shader is made of, step by step.
class LoopShaderBuilder {
 public:
  LoopShaderBuilder(const StepProgram& program, const ShaderFeatures& features, int64_t workgroup)
      : program_(program), features_(features), workgroup_(workgroup) {}

  // A kernel's code as a function of its own, called from the trip loop.
  Status AddLaunch(const WholeLoopStep& step, std::string& calls) {
    const auto index = static_cast<size_t>(step.kernel);
    if (step.kernel < 0 || index >= program_.kernels.size())
      return Internal("vulkan: loop step names kernel ", step.kernel);
    const KernelDescription& kernel = program_.kernels[index];
    std::vector<const KernelArray*> arrays;
    for (const KernelArray& array : kernel.arguments) arrays.push_back(&array);
    for (const KernelArray& array : kernel.results) arrays.push_back(&array);
    if (arrays.size() != step.buffers.size())
      return Internal("vulkan: loop step of kernel ", kernel.name, " binds ", step.buffers.size(),
                      " buffers for ", arrays.size(), " arrays");
    std::vector<std::string> names;
    for (size_t i = 0; i < arrays.size(); ++i) {
      const ElementType type = arrays[i]->shape.element_type();
      NeedTypeExtensions(type, prelude_);
      names.push_back(buffers_.Name(step.buffers[i], GlslStorageType(type)));
    }
    const std::string function = "k_step" + std::to_string(steps_++);
    KILN_ASSIGN_OR_RETURN(GlslKernelParts parts,
                          EmitGlslKernelParts(*kernel.computation, features_, names, function + "_"));
    for (size_t i = 0; i < arrays.size(); ++i) {
      if (GlslStorageType(parts.binding_types[i]) != GlslStorageType(arrays[i]->shape.element_type()))
        return Unimplemented("vulkan: kernel ", kernel.name, " stores buffer ", i, " as ",
                             GlslStorageType(parts.binding_types[i]), ", its slot holds ",
                             GlslStorageType(arrays[i]->shape.element_type()));
    }
    prelude_.Absorb(parts.prelude);
    globals_ += parts.globals;
    functions_ += "void " + function + "() {\n" +
                  WorkgroupStrided(parts.invocations, "    int k_i = int(k_g);\n" + parts.body) + "}\n";
    calls += "    " + function + "();\n" + kLoopStepBarrier;
    trip_iterations_ += CeilDivide(parts.invocations, workgroup_) * (1 + 2 * parts.loop_iterations) + 1;
    return OkStatus();
  }

  // A copy of whole words: 32-bit where the size allows, else 16- or
  // 8-bit where the device stores them.
  Status AddCopy(const WholeLoopStep& step, std::string& calls) {
    if (step.buffers.size() != 2) return Internal("vulkan: loop copy with ", step.buffers.size(), " buffers");
    ElementType word = ElementType::kU32;
    if (step.bytes % 4 != 0)
      word = step.bytes % 2 == 0 && features_.storage16 ? ElementType::kU16 : ElementType::kU8;
    if (word == ElementType::kU8 && !features_.storage8)
      return Unimplemented("vulkan: a loop copies ", step.bytes,
                           " bytes, whole bytes this device (no storageBuffer8BitAccess) cannot store");
    NeedTypeExtensions(word, prelude_);
    const std::string storage = GlslStorageType(word);
    const std::string from = buffers_.Name(step.buffers[0], storage);
    const std::string to = buffers_.Name(step.buffers[1], storage);
    const int64_t words = step.bytes / ByteWidth(word);
    const std::string value =
        word == ElementType::kU32 ? from + ".d[k_g]" : storage + "(uint(" + from + ".d[k_g]))";
    calls += WorkgroupStrided(words, "    " + to + ".d[k_g] = " + value + ";\n") + kLoopStepBarrier;
    trip_iterations_ += CeilDivide(words, workgroup_) + 1;
    return OkStatus();
  }

  // A conditional: every invocation reads the selector, meets the others
  // (a branch may write over the selector's slot), then all run the same
  // branch, so the barriers inside it stay in uniform control flow.
  Status AddConditional(const WholeLoopStep& step, std::string& calls) {
    const auto branches = static_cast<int64_t>(step.branches.size());
    const std::string branch = "k_branch" + std::to_string(conditionals_++);
    NeedTypeExtensions(step.selector_type, prelude_);
    const std::string selector = buffers_.Name(step.selector, GlslStorageType(step.selector_type)) + ".d[0]";
    if (step.selector_type == ElementType::kPred && branches == 2) {
      // pred: true runs branch 0, as the host's runner does.
      calls += "    uint " + branch + " = uint(" + selector + ") != 0u ? 0u : 1u;\n";
    } else if (step.selector_type == ElementType::kS32) {
      // An index out of range runs the last branch.
      const std::string last = std::to_string(branches - 1);
      calls += "    int " + branch + "_index = " + selector + ";\n    uint " + branch + " = " + branch +
               "_index < 0 || " + branch + "_index > " + last + " ? " + last + "u : uint(" + branch +
               "_index);\n";
    } else {
      return Unimplemented("vulkan: a loop's conditional on ", ElementTypeName(step.selector_type), " with ",
                           branches, " branches");
    }
    calls += "    barrier();\n";
    // A dispatch's trips count the loops of the branch with the most.
    const int64_t before = trip_iterations_;
    int64_t most = 0;
    for (int64_t b = 0; b < branches; ++b) {
      calls += std::string(b == 0 ? "    if (" : "    } else if (") + branch + " == " + std::to_string(b) +
               "u) {\n";
      trip_iterations_ = 0;
      KILN_RETURN_IF_ERROR(AddSteps(step.branches[static_cast<size_t>(b)], calls));
      most = std::max(most, trip_iterations_);
    }
    calls += "    }\n";
    trip_iterations_ = before + most;
    return OkStatus();
  }

  Status AddSteps(const std::vector<WholeLoopStep>& steps, std::string& calls) {
    for (const WholeLoopStep& step : steps) {
      if (!step.branches.empty()) {
        KILN_RETURN_IF_ERROR(AddConditional(step, calls));
      } else {
        KILN_RETURN_IF_ERROR(step.kernel >= 0 ? AddLaunch(step, calls) : AddCopy(step, calls));
      }
    }
    return OkStatus();
  }

  // The predicate, read by every invocation; a barrier before anyone acts
  // on it, as the body's steps may write over its slot (temporaries of the
  // condition and the body share scratch).
  std::string PredicateTest(int pointer) {
    NeedTypeExtensions(ElementType::kPred, prelude_);
    const std::string name = buffers_.Name(pointer, GlslStorageType(ElementType::kPred));
    return "    bool k_go = uint(" + name +
           ".d[0]) != 0u;\n    barrier();\n"
           "    if (!k_go) {\n      k_finished = true;\n      break;\n    }\n";
  }

  std::string Source(const std::string& name, const std::string& trip) const {
    return "// Kiln loop " + name + "\n#version 450\n" + prelude_.Extensions() +
           "layout(local_size_x_id = 0) in;\n" + buffers_.Declarations() + globals_ + prelude_.Helpers() +
           functions_ +
           "void main() {\n"
           "  uint k_trips = 0u;\n"
           "  bool k_finished = false;\n"
           "  while (k_trips < k_budget.max_trips) {\n" +
           trip +
           "    ++k_trips;\n"
           "  }\n"
           "  if (gl_LocalInvocationID.x == 0u) {\n"
           "    k_status.d[0] = k_trips;\n"
           "    k_status.d[1] = 0u;\n"
           "    k_status.d[2] = k_finished ? 1u : 0u;\n"
           "    k_status.d[3] = 0u;\n"
           "  }\n"
           "}\n";
  }

  // Loop iterations of one trip in one invocation, as lavapipe counts them
  // against its limit: every pass of a loop and one more for the test that
  // leaves it (a fori loop's trip of 3 kernels and 6 copies, 9 loops of one
  // pass, stopped there after 3450 trips: 19 a trip, where passes alone
  // are 10). The trip loop's own, each step's strided loop, and the loops
  // inside a kernel's element, whose exits are counted as passes again (a
  // loop has at least one pass each time it is entered).
  int64_t TripIterations() const { return 2 + trip_iterations_; }

 private:
  const StepProgram& program_;
  const ShaderFeatures& features_;
  const int64_t workgroup_;
  GlslPrelude prelude_;
  LoopShaderBuffers buffers_;
  std::string globals_;
  std::string functions_;
  int steps_ = 0;
  int conditionals_ = 0;
  int64_t trip_iterations_ = 0;
};

}  // namespace

int64_t GlslLoopWorkgroupSize(const ShaderFeatures& features) {
  if (features.cpu_device && features.subgroup_size > 0) return features.subgroup_size;
  return std::min(kGlslLoopWorkgroupSize, features.WorkgroupInvocationsOrMinimum());
}

StatusOr<GlslWholeLoop> EmitGlslWholeLoop(const StepProgram& program, const WholeLoopKernel& loop,
                                          const ShaderFeatures& features) {
  if (loop.predicate < 0 || loop.predicate >= loop.pointers)
    return Internal("vulkan: loop kernel ", loop.name, " has no predicate pointer");
  const int64_t bindings = 1 + int64_t{loop.pointers};
  if (features.max_storage_buffers > 0 && bindings > features.max_storage_buffers)
    return Unimplemented("vulkan: loop kernel ", loop.name, " binds ", bindings,
                         " storage buffers and this device at most ", features.max_storage_buffers);
  const int64_t workgroup = GlslLoopWorkgroupSize(features);
  LoopShaderBuilder builder(program, features, workgroup);
  std::string trip;
  KILN_RETURN_IF_ERROR(builder.AddSteps(loop.condition, trip));
  trip += builder.PredicateTest(loop.predicate);
  KILN_RETURN_IF_ERROR(builder.AddSteps(loop.body, trip));
  int64_t trips = kWholeLoopTripsPerLaunch;
  const int64_t per_trip = builder.TripIterations();
  if (features.max_loop_iterations > 0) trips = std::min(trips, features.max_loop_iterations / per_trip);
  if (trips < 1)
    return Unimplemented("vulkan: one trip of loop kernel ", loop.name, " needs ", per_trip,
                         " loop iterations, past this device's limit of ", features.max_loop_iterations);
  GlslWholeLoop result;
  result.trips_per_launch = trips;
  GlslKernel& shader = result.shader;
  shader.name = loop.name;
  shader.source = builder.Source(loop.name, trip);
  shader.input_count = static_cast<int>(bindings);
  shader.binding_count = static_cast<int>(bindings);
  shader.push_constant_bytes = 4;
  shader.invocations = workgroup;
  shader.workgroup_size = workgroup;
  shader.max_loop_iterations = trips * per_trip;
  return result;
}

}  // namespace kiln::vulkan
