// Lowering for the CUDA backend: the shared device lowering
// (core/lowering/step_lowering.h) with this backend's rules, then every
// kernel compiled to PTX (with a kernel of its own for each small loop that
// runs whole, whole_loop.h) and every library call planned as a cuBLAS GEMM,
// a cuDNN convolution or a cuFFT transform.
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/cuda_program.h"
#include "backends/cuda/ptx_emittable.h"
#include "backends/cuda/sort_emitter.h"

namespace kiln::cuda {

const StepLoweringRules& CudaLoweringRules(bool cublas_dots, int64_t parameter_bytes,
                                           bool cudnn_convolutions) {
  const auto make = [](bool library_dots, int64_t bytes, bool library_convolutions) {
    auto* made = new StepLoweringRules;
    made->backend = "cuda";
    made->slot_alignment = 256;  // what cuMemAlloc guarantees
    made->check_kernel = [bytes](const Computation& kernel) {
      KILN_RETURN_IF_ERROR(CheckPtxKernelBuffers(kernel, bytes));
      return CheckPtxEmittable(kernel);
    };
    // Not owned: the table lives as long as the process.
    made->emittable =
        std::shared_ptr<const compiler::EmittableTable>(&PtxEmittableTable(bytes), [](auto*) {});
    made->kernel_scratch_bytes = [](const Instruction& root) -> int64_t {
      return root.opcode == Opcode::kSort || root.opcode == Opcode::kTopK ? SortScratchBytes(root) : 0;
    };
    made->library_call = [library_dots, library_convolutions](const Instruction& instruction) {
      if (RunsAsUserOpKernel(instruction) || IsCufftCall(instruction)) return true;
      if (library_convolutions && instruction.opcode == Opcode::kConvolution)
        return PlanCudnnConvolution(instruction).ok();
      return library_dots && instruction.opcode == Opcode::kDot && PlanGemm(instruction).ok();
    };
    return made;
  };
  // One set per way of running dots, parameter space and way of running
  // convolutions.
  static const StepLoweringRules* const rules[2][2][2] = {
      {{make(false, kPortableKernelParameterBytes, false), make(false, kPortableKernelParameterBytes, true)},
       {make(false, kLargeKernelParameterBytes, false), make(false, kLargeKernelParameterBytes, true)}},
      {{make(true, kPortableKernelParameterBytes, false), make(true, kPortableKernelParameterBytes, true)},
       {make(true, kLargeKernelParameterBytes, false), make(true, kLargeKernelParameterBytes, true)}},
  };
  return *rules[cublas_dots ? 1 : 0][parameter_bytes == kLargeKernelParameterBytes ? 1 : 0]
               [cudnn_convolutions ? 1 : 0];
}

Status RunCudaPasses(Module& module, int optimization_level, int64_t parameter_bytes, bool cufft_transforms) {
  if (cufft_transforms) KILN_RETURN_IF_ERROR(CufftCalls().Run(module).status());
  return RunDevicePasses(module, optimization_level, CudaLoweringRules(false, parameter_bytes));
}

StatusOr<std::unique_ptr<CudaProgram>> LowerForCuda(std::unique_ptr<Module> module, const PtxTarget& target,
                                                    const std::string& dump_ir_dir,
                                                    const std::string& dump_stem, bool cublas_dots,
                                                    bool cudnn_convolutions) {
  auto program = std::make_unique<CudaProgram>();
  KILN_RETURN_IF_ERROR(LowerToStepProgram(
      std::move(module), CudaLoweringRules(cublas_dots, target.kernel_parameter_bytes, cudnn_convolutions),
      *program));
  for (const Instruction* call : program->library_calls) {
    CudaLibraryCall planned;
    if (RunsAsUserOpKernel(*call)) {
      KILN_ASSIGN_OR_RETURN(UserOpLaunch launch, PlanUserOpLaunch(*call));
      planned.user_op = static_cast<int>(program->user_ops.size());
      program->user_ops.push_back(std::move(launch));
    } else if (IsCufftCall(*call)) {
      KILN_ASSIGN_OR_RETURN(CufftTransform transform, PlanCufftTransform(*call));
      planned.fft = static_cast<int>(program->ffts.size());
      program->ffts.push_back(transform);
    } else if (call->opcode == Opcode::kConvolution) {
      KILN_ASSIGN_OR_RETURN(CudnnConvolutionPlan convolution, PlanCudnnConvolution(*call));
      planned.convolution = static_cast<int>(program->convolutions.size());
      program->convolutions.push_back(std::move(convolution));
    } else {
      KILN_ASSIGN_OR_RETURN(GemmPlan gemm, PlanGemm(*call));
      planned.gemm = static_cast<int>(program->gemms.size());
      program->gemms.push_back(gemm);
    }
    program->calls.push_back(planned);
  }
  KILN_ASSIGN_OR_RETURN(const bool whole_loops, WholeLoopsEnabled());
  WholeLoopPlan loops = whole_loops ? PlanWholeLoops(*program) : WholeLoopPlan{};
  KILN_ASSIGN_OR_RETURN(program->ptx,
                        CompileToPtx(program->kernels, target, dump_ir_dir, dump_stem, loops.kernels));
  if (program->ptx.kernels.size() != program->kernels.size())
    return Internal("cuda: ", program->ptx.kernels.size(), " kernels compiled for ", program->kernels.size(),
                    " descriptions");
  KILN_ASSIGN_OR_RETURN(program->whole_loops,
                        AdoptWholeLoops(std::move(loops), program->ptx.loops, *program));
  for (size_t i = 0; i < program->kernels.size(); ++i) {
    program->kernels[i].grid = CudaKernelGrid(program->ptx.kernels[i]);
    program->kernels[i].launches = program->ptx.kernels[i].launches;
  }
  return program;
}

}  // namespace kiln::cuda
