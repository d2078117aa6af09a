#include "backends/cuda/whole_loop.h"

#include <utility>

namespace kiln::cuda {
namespace {

// Roots whose kernels have entries of their own (sort, top-k and the rng
// kernels read thread ids themselves, and rng kernels take a key per
// launch): a loop using one runs from the host.
bool KernelHasOwnEntry(const Computation& computation) {
  const Instruction* root = computation.root();
  if (root == nullptr) return true;
  switch (root->opcode) {
    case Opcode::kSort:
    case Opcode::kTopK:
    case Opcode::kRng:
    case Opcode::kRngBitGenerator: return true;
    default: return false;
  }
}

// Where the status lies past the temporaries: an alignment every access
// of the device's takes.
constexpr int64_t kCudaLoopStatusAlignment = 256;

}  // namespace

StatusOr<bool> WholeLoopsEnabled() { return kiln::WholeLoopsEnabled("KILN_CUDA_WHOLE_LOOPS", "cuda"); }

WholeLoopPlan PlanWholeLoops(const StepProgram& program) {
  return kiln::PlanWholeLoops(
      program,
      [&program](int kernel) {
        return !KernelHasOwnEntry(*program.kernels[static_cast<size_t>(kernel)].computation);
      },
      /*conditionals=*/true);
}

StatusOr<std::vector<WholeLoop>> AdoptWholeLoops(WholeLoopPlan plan, const std::vector<std::string>& entries,
                                                 StepProgram& program) {
  return kiln::AdoptWholeLoops(std::move(plan), entries, program, kCudaLoopStatusAlignment, "cuda");
}

}  // namespace kiln::cuda
