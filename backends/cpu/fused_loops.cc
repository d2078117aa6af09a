#include "backends/cpu/fused_loops.h"

#include <string>
#include <unordered_map>
#include <vector>

#include "backends/cpu/control_flow_thunks.h"
#include "backends/cpu/kernel_thunk.h"

namespace kiln::cpu {
namespace {

// Appends the kernel descriptions (`description_of` their computations) of
// `sequence`'s kernels to `kernels` in run order; false when a step is not
// a kernel (the loop then runs as it is) or touches more than
// kMaxFusedLoopKernelBytes.
bool AppendLoopKernels(const ThunkSequence& sequence,
                       const std::unordered_map<const Computation*, size_t>& description_of,
                       std::vector<size_t>& kernels) {
  for (const auto& thunk : sequence.thunks) {
    const auto* kernel = dynamic_cast<const KernelThunk*>(thunk.get());
    if (kernel == nullptr || kernel->computation() == nullptr) return false;
    const Computation& computation = *kernel->computation();
    const auto description = description_of.find(&computation);
    if (description == description_of.end()) return false;
    if (FusedLoopKernelBuffers(computation) != kernel->arguments().size()) return false;
    std::vector<Shape> arrays = computation.root()->shape.Leaves();
    for (const Instruction* parameter : computation.parameters()) arrays.push_back(parameter->shape);
    int64_t bytes = 0;
    for (const Shape& array : arrays) {
      const int64_t array_bytes = DenseBytes(array);
      if (array_bytes > kMaxFusedLoopKernelBytes - bytes) return false;
      bytes += array_bytes;
    }
    kernels.push_back(description->second);
  }
  return true;
}

}  // namespace

FusedLoopPlan PlanFusedLoops(CompiledProgram& program) {
  FusedLoopPlan plan;
  std::unordered_map<const Computation*, size_t> description_of;
  for (size_t i = 0; i < program.kernel_descriptions.size(); ++i)
    description_of.try_emplace(program.kernel_descriptions[i].computation, i);
  for (ThunkSequence& sequence : program.sequences) {
    for (auto& thunk : sequence.thunks) {
      auto* loop = dynamic_cast<WhileThunk*>(thunk.get());
      if (loop == nullptr || !loop->state_alternates()) continue;
      const ThunkSequence& condition = *loop->condition().sequence;
      const ThunkSequence& body = *loop->body().sequence;
      if (condition.thunks.size() + body.thunks.size() > kMaxFusedLoopKernels) continue;
      FusedLoopRequest request;
      if (!AppendLoopKernels(condition, description_of, request.condition) ||
          !AppendLoopKernels(body, description_of, request.body))
        continue;
      request.name = "kiln_loop_" + std::to_string(plan.requests.size());
      plan.requests.push_back(std::move(request));
      plan.loops.push_back(loop);
    }
  }
  return plan;
}

Status InstallFusedLoops(const FusedLoopPlan& plan, const CompiledKernels& code, CompiledProgram& program) {
  const std::vector<FusedLoopFunction>& functions = code.loops();
  if (functions.size() != plan.loops.size()) {
    return Internal("cpu: the code generator returned ", functions.size(), " loops for ", plan.loops.size(),
                    " requests");
  }
  for (size_t i = 0; i < plan.loops.size(); ++i) plan.loops[i]->SetFusedLoop(functions[i]);
  program.statistics.fused_loops = static_cast<int64_t>(plan.loops.size());
  return OkStatus();
}

}  // namespace kiln::cpu
