#include "backends/cuda/ptx_export.h"

#include "backends/cuda/cuda_program.h"
#include "core/verifier.h"

namespace kiln::cuda {

StatusOr<PtxExport> ExportPtx(const Module& module, const PtxTarget& target) {
  if (module.entry() == nullptr) return InvalidArgument("cuda: module '", module.name(), "' has no entry");
  KILN_RETURN_IF_ERROR(VerifyModule(module));
  std::unique_ptr<Module> clone = module.Clone();
  KILN_RETURN_IF_ERROR(RunCudaPasses(*clone, /*optimization_level=*/2, target.kernel_parameter_bytes));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<CudaProgram> program, LowerForCuda(std::move(clone), target));
  PtxExport result;
  result.ptx = std::move(program->ptx.ptx);
  result.kernels = std::move(program->ptx.kernels);
  // The loops run whole are entries of the module too: one block each.
  for (const WholeLoop& loop : program->whole_loops)
    result.kernels.push_back({loop.entry, kThreadsPerBlock, static_cast<int>(loop.slots.size()) + 1});
  return result;
}

}  // namespace kiln::cuda
