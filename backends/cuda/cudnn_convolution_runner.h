// The run-time half of a cuDNN convolution (the compile-time half is the
// plan of cudnn_convolution.h): what cuDNN needs to run one convolution of
// a loaded program, made once and kept with the executable. Making it on
// every call (four descriptors, cuDNN 9's heuristic query, a workspace
// query) cost about 2 ms of host time against an 86 us convolution
// (issue 15).
//
// The first run sets the descriptors up and chooses the algorithm as
// PyTorch's cudnn.benchmark and XLA's autotuner do: it times every
// algorithm on the call's own buffers (cudnnFindConvolutionForwardAlgorithmEx)
// and keeps the fastest that succeeded within kCudnnWorkspaceLimitBytes.
// Where that search fails or finds none, it takes the first algorithm of
// cuDNN's heuristic list (cudnnGetConvolutionForwardAlgorithm_v7) that fits
// the limit. An f32 convolution keeps FMA math whatever the algorithm (no
// TF32); f16 and bf16 run in the math the chosen algorithm was timed in.
// Every later run calls cudnnConvolutionForward alone.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "backends/cuda/cudnn_convolution.h"
#include "backends/cuda/cudnn_library.h"
#include "core/status.h"

namespace kiln::cuda {

// The most workspace a convolution's algorithm may use. Each execution in
// flight keeps the largest workspace its convolutions chose, so this bounds
// that memory; the algorithms that win for common convolutions need a few
// MiB or none, and 1 GiB leaves room for the FFT ones where they are faster.
inline constexpr int64_t kCudnnWorkspaceLimitBytes = int64_t{1} << 30;

// Device memory a cuDNN convolution asks its caller for. Each block must
// stay valid until the stream's work queued so far is done.
struct CudnnMemory {
  // The workspace of one forward call; callers keep one block per execution
  // and hand it out again while it is large enough.
  std::function<StatusOr<CUdeviceptr>(int64_t bytes)> workspace;
  // Scratch for the one-off algorithm search, which callers may reclaim
  // after the call that made the search.
  std::function<StatusOr<CUdeviceptr>(int64_t bytes)> search_scratch;
};

class CudnnConvolutionRunner {
 public:
  // Calls nothing in cuDNN yet: the first Run does.
  CudnnConvolutionRunner(const Cudnn& cudnn, CudnnConvolutionPlan plan);
  ~CudnnConvolutionRunner();  // destroys the descriptors
  CudnnConvolutionRunner(const CudnnConvolutionRunner&) = delete;
  CudnnConvolutionRunner& operator=(const CudnnConvolutionRunner&) = delete;

  // Queues the convolution on the stream `handle` is bound to; the first
  // call sets the descriptors up and chooses the algorithm first, blocking
  // other callers meanwhile. Thread-safe: concurrent executions pass
  // handles of their own, and after the first call the descriptors are only
  // read. An error is INTERNAL naming the cuDNN call, cuDNN's words for the
  // status and the plan; after a failed first call the next one tries again.
  Status Run(cudnnHandle_t handle, CUdeviceptr input, CUdeviceptr filter, CUdeviceptr output,
             const CudnnMemory& memory);

 private:
  Status Prepare(cudnnHandle_t handle, CUdeviceptr input, CUdeviceptr filter, CUdeviceptr output,
                 const CudnnMemory& memory);
  Status SetDescriptors();
  StatusOr<cudnnConvolutionFwdAlgoPerf_t> FastestMeasured(cudnnHandle_t handle, int algorithms,
                                                          CUdeviceptr input, CUdeviceptr filter,
                                                          CUdeviceptr output, const CudnnMemory& memory);
  StatusOr<cudnnConvolutionFwdAlgoPerf_t> FirstOfHeuristics(cudnnHandle_t handle, int algorithms);
  bool Usable(const cudnnConvolutionFwdAlgoPerf_t& answer) const;
  Status Check(cudnnStatus_t status, const char* call) const;

  const Cudnn& cudnn_;
  const CudnnConvolutionPlan plan_;
  const std::string about_;  // " for the " + the plan, ending every error
  std::mutex mutex_;         // guards everything below until `ready_`
  cudnnTensorDescriptor_t input_ = nullptr, output_ = nullptr;
  cudnnFilterDescriptor_t filter_ = nullptr;
  cudnnConvolutionDescriptor_t convolution_ = nullptr;
  bool ready_ = false;
  cudnnConvolutionFwdAlgo_t algorithm_ = 0;
  size_t workspace_bytes_ = 0;
};

}  // namespace kiln::cuda
