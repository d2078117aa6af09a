#include "backends/cuda/cudnn_convolution_runner.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace kiln::cuda {

CudnnConvolutionRunner::CudnnConvolutionRunner(const Cudnn& cudnn, CudnnConvolutionPlan plan)
    : cudnn_(cudnn), plan_(std::move(plan)), about_(" for the " + plan_.ToString()) {}

CudnnConvolutionRunner::~CudnnConvolutionRunner() {
  const CudnnFunctions& api = cudnn_.api();
  if (input_ != nullptr) api.DestroyTensorDescriptor(input_);
  if (output_ != nullptr) api.DestroyTensorDescriptor(output_);
  if (filter_ != nullptr) api.DestroyFilterDescriptor(filter_);
  if (convolution_ != nullptr) api.DestroyConvolutionDescriptor(convolution_);
}

Status CudnnConvolutionRunner::Check(cudnnStatus_t status, const char* call) const {
  return cudnn_.Check(status, call + about_);
}

Status CudnnConvolutionRunner::Run(cudnnHandle_t handle, CUdeviceptr input, CUdeviceptr filter,
                                   CUdeviceptr output, const CudnnMemory& memory) {
  cudnnConvolutionFwdAlgo_t algorithm = 0;
  size_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!ready_) KILN_RETURN_IF_ERROR(Prepare(handle, input, filter, output, memory));
    algorithm = algorithm_;
    bytes = workspace_bytes_;
  }
  CUdeviceptr workspace = 0;
  if (bytes > 0) {
    KILN_ASSIGN_OR_RETURN(workspace, memory.workspace(static_cast<int64_t>(bytes)));
  }
  const float one = 1.0f, zero = 0.0f;
  return Check(cudnn_.api().ConvolutionForward(handle, &one, input_, reinterpret_cast<const void*>(input),
                                               filter_, reinterpret_cast<const void*>(filter), convolution_,
                                               algorithm, reinterpret_cast<void*>(workspace), bytes, &zero,
                                               output_, reinterpret_cast<void*>(output)),
               "cudnnConvolutionForward");
}

// Creates the descriptors not made yet (an earlier failed attempt may have
// made some) and sets all of them from the plan.
Status CudnnConvolutionRunner::SetDescriptors() {
  const CudnnFunctions& api = cudnn_.api();
  if (input_ == nullptr)
    KILN_RETURN_IF_ERROR(Check(api.CreateTensorDescriptor(&input_), "cudnnCreateTensorDescriptor"));
  if (output_ == nullptr)
    KILN_RETURN_IF_ERROR(Check(api.CreateTensorDescriptor(&output_), "cudnnCreateTensorDescriptor"));
  if (filter_ == nullptr)
    KILN_RETURN_IF_ERROR(Check(api.CreateFilterDescriptor(&filter_), "cudnnCreateFilterDescriptor"));
  if (convolution_ == nullptr)
    KILN_RETURN_IF_ERROR(
        Check(api.CreateConvolutionDescriptor(&convolution_), "cudnnCreateConvolutionDescriptor"));
  const int rank = static_cast<int>(plan_.input_dims.size());
  const int spatial = static_cast<int>(plan_.padding.size());
  KILN_RETURN_IF_ERROR(Check(api.SetTensorNdDescriptor(input_, plan_.data_type, rank, plan_.input_dims.data(),
                                                       plan_.input_strides.data()),
                             "cudnnSetTensorNdDescriptor (input)"));
  KILN_RETURN_IF_ERROR(Check(api.SetTensorNdDescriptor(output_, plan_.data_type, rank,
                                                       plan_.output_dims.data(), plan_.output_strides.data()),
                             "cudnnSetTensorNdDescriptor (output)"));
  KILN_RETURN_IF_ERROR(Check(api.SetFilterNdDescriptor(filter_, plan_.data_type, plan_.filter_format, rank,
                                                       plan_.filter_dims.data()),
                             "cudnnSetFilterNdDescriptor"));
  KILN_RETURN_IF_ERROR(
      Check(api.SetConvolutionNdDescriptor(convolution_, spatial, plan_.padding.data(), plan_.strides.data(),
                                           plan_.dilations.data(), plan_.mode, CUDNN_DATA_FLOAT),
            "cudnnSetConvolutionNdDescriptor"));
  KILN_RETURN_IF_ERROR(
      Check(api.SetConvolutionGroupCount(convolution_, plan_.groups), "cudnnSetConvolutionGroupCount"));
  return Check(api.SetConvolutionMathType(convolution_, plan_.math), "cudnnSetConvolutionMathType");
}

// An answer Kiln may run: it succeeded, fits the workspace limit and, for
// an f32 plan (FMA math), does not use tensor cores, which would round the
// products to TF32.
bool CudnnConvolutionRunner::Usable(const cudnnConvolutionFwdAlgoPerf_t& answer) const {
  if (answer.status != CUDNN_STATUS_SUCCESS) return false;
  if (answer.memory > static_cast<size_t>(kCudnnWorkspaceLimitBytes)) return false;
  const bool tensor_ops =
      answer.mathType == CUDNN_TENSOR_OP_MATH || answer.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
  return plan_.math != CUDNN_FMA_MATH || !tensor_ops;
}

Status CudnnConvolutionRunner::Prepare(cudnnHandle_t handle, CUdeviceptr input, CUdeviceptr filter,
                                       CUdeviceptr output, const CudnnMemory& memory) {
  const CudnnFunctions& api = cudnn_.api();
  KILN_RETURN_IF_ERROR(SetDescriptors());
  int algorithms = 0;
  KILN_RETURN_IF_ERROR(Check(api.GetConvolutionForwardAlgorithmMaxCount(handle, &algorithms),
                             "cudnnGetConvolutionForwardAlgorithmMaxCount"));
  if (algorithms < 1) return Internal("cuda: cuDNN counts no forward convolution algorithm", about_);
  StatusOr<cudnnConvolutionFwdAlgoPerf_t> chosen =
      FastestMeasured(handle, algorithms, input, filter, output, memory);
  if (!chosen.ok()) {
    // The heuristics need no device memory and run nothing: the fallback
    // when the search cannot run (no memory for its scratch) or finds none.
    StatusOr<cudnnConvolutionFwdAlgoPerf_t> heuristic = FirstOfHeuristics(handle, algorithms);
    if (!heuristic.ok())
      return Status(heuristic.status().code(),
                    heuristic.status().message() +
                        " (after the timed search failed: " + chosen.status().message() + ")");
    chosen = std::move(heuristic);
  }
  // cuDNN picks tensor-op kernels by algorithm and math type together: the
  // math the algorithm was timed or proposed in, except that f32 stays FMA.
  if (plan_.math != CUDNN_FMA_MATH && chosen->mathType != plan_.math) {
    KILN_RETURN_IF_ERROR(
        Check(api.SetConvolutionMathType(convolution_, chosen->mathType), "cudnnSetConvolutionMathType"));
  }
  size_t bytes = 0;
  KILN_RETURN_IF_ERROR(Check(api.GetConvolutionForwardWorkspaceSize(handle, input_, filter_, convolution_,
                                                                    output_, chosen->algo, &bytes),
                             "cudnnGetConvolutionForwardWorkspaceSize"));
  algorithm_ = chosen->algo;
  workspace_bytes_ = std::max(bytes, chosen->memory);
  ready_ = true;
  return OkStatus();
}

// Runs every algorithm once on the call's buffers (the output is written
// again by the forward call that follows) and returns the fastest usable.
StatusOr<cudnnConvolutionFwdAlgoPerf_t> CudnnConvolutionRunner::FastestMeasured(
    cudnnHandle_t handle, int algorithms, CUdeviceptr input, CUdeviceptr filter, CUdeviceptr output,
    const CudnnMemory& memory) {
  const CudnnFunctions& api = cudnn_.api();
  // The search's scratch: the most any algorithm within the limit asks for
  // (one asking for more fails in the search and is not chosen). The
  // legacy API numbers its algorithms 0 to the count less one.
  size_t scratch_bytes = 0;
  for (cudnnConvolutionFwdAlgo_t algorithm = 0; algorithm < algorithms; ++algorithm) {
    size_t bytes = 0;
    const cudnnStatus_t asked = api.GetConvolutionForwardWorkspaceSize(handle, input_, filter_, convolution_,
                                                                       output_, algorithm, &bytes);
    if (asked == CUDNN_STATUS_SUCCESS && bytes <= static_cast<size_t>(kCudnnWorkspaceLimitBytes))
      scratch_bytes = std::max(scratch_bytes, bytes);
  }
  CUdeviceptr scratch = 0;
  if (scratch_bytes > 0) {
    KILN_ASSIGN_OR_RETURN(scratch, memory.search_scratch(static_cast<int64_t>(scratch_bytes)));
  }
  std::vector<cudnnConvolutionFwdAlgoPerf_t> answers(static_cast<size_t>(algorithms));
  int returned = 0;
  KILN_RETURN_IF_ERROR(Check(
      api.FindConvolutionForwardAlgorithmEx(handle, input_, reinterpret_cast<const void*>(input), filter_,
                                            reinterpret_cast<const void*>(filter), convolution_, output_,
                                            reinterpret_cast<void*>(output), algorithms, &returned,
                                            answers.data(), reinterpret_cast<void*>(scratch), scratch_bytes),
      "cudnnFindConvolutionForwardAlgorithmEx"));
  const cudnnConvolutionFwdAlgoPerf_t* fastest = nullptr;
  for (int i = 0; i < std::min(returned, algorithms); ++i) {
    const cudnnConvolutionFwdAlgoPerf_t& answer = answers[static_cast<size_t>(i)];
    if (Usable(answer) && (fastest == nullptr || answer.time < fastest->time)) fastest = &answer;
  }
  if (fastest == nullptr)
    return Internal("cuda: cudnnFindConvolutionForwardAlgorithmEx timed no algorithm that runs within ",
                    kCudnnWorkspaceLimitBytes, " bytes of workspace", about_);
  return *fastest;
}

// The first algorithm of cuDNN's heuristic list, best first, that Kiln may run.
StatusOr<cudnnConvolutionFwdAlgoPerf_t> CudnnConvolutionRunner::FirstOfHeuristics(cudnnHandle_t handle,
                                                                                  int algorithms) {
  std::vector<cudnnConvolutionFwdAlgoPerf_t> answers(static_cast<size_t>(algorithms));
  int returned = 0;
  KILN_RETURN_IF_ERROR(
      Check(cudnn_.api().GetConvolutionForwardAlgorithm_v7(handle, input_, filter_, convolution_, output_,
                                                           algorithms, &returned, answers.data()),
            "cudnnGetConvolutionForwardAlgorithm_v7"));
  for (int i = 0; i < std::min(returned, algorithms); ++i) {
    if (Usable(answers[static_cast<size_t>(i)])) return answers[static_cast<size_t>(i)];
  }
  return Internal("cuda: cuDNN offers no algorithm that runs within ", kCudnnWorkspaceLimitBytes,
                  " bytes of workspace", about_);
}

}  // namespace kiln::cuda
