// A CUDA program loaded into one GPU: its PTX module, its kernels' entry
// points, its constants in device memory and, when it calls cuBLAS, the
// GPU's pool of cuBLAS handles, when it calls cuDNN, the descriptors and
// algorithm of each convolution and its executions' workspaces, when it
// calls cuFFT, the plans of its transforms. Execute runs the step
// sequences (core/lowering/step_runner.h) on a stream of its own,
// reading loop predicates and branch selectors back to the host (a small
// loop's finished flag, when it runs whole: whole_loop.h), and returns
// when the results are ready.
#pragma once

#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "backends/cuda/cublas_handles.h"
#include "backends/cuda/cuda_buffer.h"
#include "backends/cuda/cuda_program.h"
#include "backends/cuda/cudnn_convolution_runner.h"
#include "backends/cuda/cudnn_handles.h"
#include "backends/cuda/cufft_plans.h"
#include "backends/cuda/workspace_pool.h"
#include "core/backend.h"
#include "core/interpreter/eval_context.h"

namespace kiln::cuda {

class CudaExecutable : public Executable {
 public:
  // Loads `program`'s PTX into `memory`'s context (the driver's JIT log is
  // in the error when it refuses it) and uploads the constants.
  // `queues` are the backend's infeed and outfeed queues; `blas` the GPU's
  // cuBLAS handles (needed when the program has GEMMs, else may be null),
  // `dnn` its cuDNN handles (needed when it has cuDNN convolutions),
  // `cufft` the library its cuFFT transforms use (needed when it has them).
  static StatusOr<std::unique_ptr<CudaExecutable>> Load(std::shared_ptr<const CudaProgram> program,
                                                        Device* device, std::shared_ptr<DeviceMemory> memory,
                                                        std::shared_ptr<interpreter::HostQueues> queues,
                                                        std::shared_ptr<CublasHandles> blas = nullptr,
                                                        std::shared_ptr<CudnnHandles> dnn = nullptr,
                                                        const Cufft* cufft = nullptr);
  ~CudaExecutable() override;

  const std::vector<Shape>& parameter_leaves() const override { return program_->parameter_leaves; }
  const std::vector<Shape>& result_leaves() const override { return program_->result_leaves; }
  StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> Execute(std::span<DeviceBuffer* const> arguments,
                                                               const ExecuteOptions& options) override;

 private:
  class StepExecutor;
  CudaExecutable(std::shared_ptr<const CudaProgram> program, Device* device,
                 std::shared_ptr<DeviceMemory> memory, std::shared_ptr<interpreter::HostQueues> queues,
                 std::shared_ptr<CublasHandles> blas, std::shared_ptr<CudnnHandles> dnn)
      : program_(std::move(program)),
        device_(device),
        memory_(std::move(memory)),
        queues_(std::move(queues)),
        blas_(std::move(blas)),
        dnn_(std::move(dnn)) {}

  std::shared_ptr<const CudaProgram> program_;
  Device* device_;
  std::shared_ptr<DeviceMemory> memory_;
  std::shared_ptr<interpreter::HostQueues> queues_;
  std::shared_ptr<CublasHandles> blas_;
  std::shared_ptr<CudnnHandles> dnn_;
  CUmodule module_ = nullptr;
  std::vector<CUfunction> functions_;        // per kernel of program_->ptx
  std::vector<CUfunction> loop_functions_;   // per program_->whole_loops entry
  std::vector<LoadedUserOp> user_ops_;       // per program_->user_ops entry
  std::vector<DeviceBlock> constants_;       // per program constant
  std::vector<DeviceBlock> user_op_frames_;  // the call frames of the user ops that take one
  // Per program_->convolutions entry; each set up at its first run.
  std::vector<std::unique_ptr<CudnnConvolutionRunner>> convolutions_;
  std::unique_ptr<WorkspacePool> workspaces_;  // cuDNN's and cuFFT's, when the program calls them
  std::unique_ptr<CufftPlans> ffts_;           // per program_->ffts entry, when there are any
  // A whole loop's index in program_->whole_loops, by the loop's step.
  std::unordered_map<const ProgramStep*, size_t> whole_loop_of_;
};

}  // namespace kiln::cuda
