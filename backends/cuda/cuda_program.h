// A compiled CUDA program: step sequences (kernel launches, cuBLAS GEMMs,
// copies, loops and branches whose predicates are read back to the host) over slots,
// each slot one array in device memory. Immutable once built, so one
// program serves concurrent executions.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/cublas_gemm.h"
#include "backends/cuda/cudnn_convolution.h"
#include "backends/cuda/cufft_transform.h"
#include "backends/cuda/ptx_compiler.h"
#include "backends/cuda/user_op_kernels.h"
#include "backends/cuda/whole_loop.h"
#include "core/ir.h"
#include "core/lowering/step_lowering.h"
#include "core/lowering/step_program.h"

namespace kiln::cuda {

// The CUDA program is the shared step program (core/lowering) plus the
// PTX of its kernels; each kernel description's grid is CudaKernelGrid's.
using SlotKind = StepSlotKind;
using Slot = StepSlot;
using Step = ProgramStep;

// A library call is a cuBLAS GEMM, a cuDNN convolution, a cuFFT transform
// or a registered op's own PTX kernel.
struct CudaLibraryCall {
  int gemm = -1;         // index into gemms
  int convolution = -1;  // index into convolutions
  int fft = -1;          // index into ffts
  int user_op = -1;      // index into user_ops
};

struct CudaProgram : StepProgram {
  PtxModule ptx;                       // every kernel; ptx.kernels[step.kernel]
  std::vector<CudaLibraryCall> calls;  // per library call: calls[step.call]
  std::vector<GemmPlan> gemms;
  std::vector<CudnnConvolutionPlan> convolutions;
  std::vector<CufftTransform> ffts;
  std::vector<UserOpLaunch> user_ops;
  // The loops that run whole on the device (whole_loop.h), by their steps.
  std::vector<WholeLoop> whole_loops;
};

// Lowers an optimised module (after the pass pipeline) and compiles its
// kernels for `target`. With `cublas_dots`, every dot that is a GEMM
// (PlanGemm) becomes a cuBLAS call instead of a kernel; with
// `cudnn_convolutions`, every convolution cuDNN takes
// (PlanCudnnConvolution) a cuDNN call; every custom call CufftCalls made
// a cuFFT transform; a registered op's
// call with a PTX kernel is a call of that kernel. UNIMPLEMENTED names
// the first op that cannot run.
StatusOr<std::unique_ptr<CudaProgram>> LowerForCuda(std::unique_ptr<Module> module, const PtxTarget& target,
                                                    const std::string& dump_ir_dir = "",
                                                    const std::string& dump_stem = "",
                                                    bool cublas_dots = false,
                                                    bool cudnn_convolutions = false);

// The rules the shared device lowering follows for this backend: kernels
// are what CheckPtxEmittable accepts within `parameter_bytes` of kernel
// parameters (PtxTarget::kernel_parameter_bytes), sorts get merge scratch;
// with `cublas_dots`, dots that are GEMMs are library calls, and with
// `cudnn_convolutions` convolutions that cuDNN takes.
const StepLoweringRules& CudaLoweringRules(bool cublas_dots = false,
                                           int64_t parameter_bytes = kPortableKernelParameterBytes,
                                           bool cudnn_convolutions = false);

// The module pipeline the CUDA backend runs before lowering (the core
// passes, fusing what CheckPtxEmittable accepts, no kernel binding more
// buffers than `parameter_bytes` of parameters hold). With
// `cufft_transforms`, CufftCalls first makes every fft cuFFT takes a cuFFT
// call; the others are expanded as without it.
Status RunCudaPasses(Module& module, int optimization_level,
                     int64_t parameter_bytes = kPortableKernelParameterBytes, bool cufft_transforms = false);

}  // namespace kiln::cuda
