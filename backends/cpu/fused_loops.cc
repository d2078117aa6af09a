#include "backends/cpu/fused_loops.h"

#include <string>
#include <vector>

#include "backends/cpu/control_flow_thunks.h"
#include "backends/cpu/kernel_thunk.h"

namespace kiln::cpu {
namespace {

// Appends the computations of `sequence`'s kernels to `kernels` in run
// order; false when a step is not a kernel (the loop then runs as it is)
// or touches more than kMaxFusedLoopKernelBytes.
bool AppendLoopKernels(const ThunkSequence& sequence, std::vector<const Computation*>& kernels) {
  for (const auto& thunk : sequence.thunks) {
    const auto* kernel = dynamic_cast<const KernelThunk*>(thunk.get());
    if (kernel == nullptr || kernel->computation() == nullptr) return false;
    const Computation& computation = *kernel->computation();
    if (FusedLoopKernelBuffers(computation) != kernel->arguments().size()) return false;
    std::vector<Shape> arrays = computation.root()->shape.Leaves();
    for (const Instruction* parameter : computation.parameters()) arrays.push_back(parameter->shape);
    int64_t bytes = 0;
    for (const Shape& array : arrays) {
      const int64_t array_bytes = DenseBytes(array);
      if (array_bytes > kMaxFusedLoopKernelBytes - bytes) return false;
      bytes += array_bytes;
    }
    kernels.push_back(&computation);
  }
  return true;
}

}  // namespace

Status CompileFusedLoops(CompiledProgram& program, KernelCompiler& compiler, const KernelDump& dump) {
  std::vector<FusedLoopRequest> requests;
  std::vector<WhileThunk*> loops;
  for (ThunkSequence& sequence : program.sequences) {
    for (auto& thunk : sequence.thunks) {
      auto* loop = dynamic_cast<WhileThunk*>(thunk.get());
      if (loop == nullptr || !loop->state_alternates()) continue;
      const ThunkSequence& condition = *loop->condition().sequence;
      const ThunkSequence& body = *loop->body().sequence;
      if (condition.thunks.size() + body.thunks.size() > kMaxFusedLoopKernels) continue;
      FusedLoopRequest request;
      if (!AppendLoopKernels(condition, request.condition) || !AppendLoopKernels(body, request.body))
        continue;
      request.name = "kiln_loop_" + std::to_string(requests.size());
      requests.push_back(std::move(request));
      loops.push_back(loop);
    }
  }
  if (requests.empty()) return OkStatus();
  KernelDump loop_dump = dump;
  if (!loop_dump.directory.empty()) loop_dump.stem += ".loops";
  KILN_ASSIGN_OR_RETURN(program.fused_loop_code, compiler.Compile({}, requests, loop_dump));
  const std::vector<FusedLoopFunction>& functions = program.fused_loop_code->loops();
  if (functions.size() != loops.size()) {
    return Internal("cpu: the code generator returned ", functions.size(), " loops for ", loops.size(),
                    " requests");
  }
  for (size_t i = 0; i < loops.size(); ++i) loops[i]->SetFusedLoop(functions[i]);
  program.statistics.fused_loops = static_cast<int64_t>(loops.size());
  return OkStatus();
}

}  // namespace kiln::cpu
