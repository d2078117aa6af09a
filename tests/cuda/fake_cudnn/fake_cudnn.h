// What the fake cuDNN (fake_cudnn.cc) records of each convolution it runs,
// read by tests through its exported hooks:
//   int kiln_fake_cudnn_forward_count(void)                   forward calls so far
//   int kiln_fake_cudnn_forward(int i, FakeConvolutionCall*)  call i (0 when out of range)
//   void kiln_fake_cudnn_fail_next(int status)                the next forward returns `status`
//   int kiln_fake_cudnn_live_handles(void)                    handles created, not destroyed
//   int kiln_fake_cudnn_live_descriptors(void)                descriptors created, not destroyed
//   int kiln_fake_cudnn_calls(int counter)                    calls so far of a FakeCudnnCounter
//   void kiln_fake_cudnn_fail_next_search(int status)         the next cudnnFindConvolutionForwardAlgorithmEx
//                                                             returns `status`
//
// Its forward algorithms, by cuDNN's numbers, with the time its timed search
// (cudnnFindConvolutionForwardAlgorithmEx) reports and the workspace each
// needs; 2, 3, 5 and 6 are not supported:
//   0 IMPLICIT_GEMM          3.0 ms  no workspace
//   1 IMPLICIT_PRECOMP_GEMM  2.0 ms  4 KiB
//   4 FFT                    0.5 ms  16 GiB, beyond Kiln's workspace limit
//   7 WINOGRAD_NONFUSED      1.0 ms  8 KiB
// The search answers in that (numeric) order, not sorted by time, and an
// algorithm needing more workspace than it was given fails there. The
// heuristics (cudnnGetConvolutionForwardAlgorithm_v7) answer 4, 1, 7, 0 and
// then the unsupported ones, all but those with CUDNN_STATUS_SUCCESS.
#pragma once

#include <cstddef>

namespace kiln::cuda::fake {

inline constexpr int kFakeCudnnMaxRank = 5;

inline constexpr int kFakeFastestAlgorithmWithinLimit = 7;  // WINOGRAD_NONFUSED
inline constexpr size_t kFakeFastestAlgorithmWorkspace = 8192;
inline constexpr int kFakeFirstHeuristicWithinLimit = 1;  // IMPLICIT_PRECOMP_GEMM
inline constexpr size_t kFakeFirstHeuristicWorkspace = 4096;
inline constexpr size_t kFakeBeyondLimitWorkspace = size_t{16} << 30;  // FFT's

// What kiln_fake_cudnn_calls counts.
enum FakeCudnnCounter : int {
  kFakeDescriptorsCreated,  // tensor, filter and convolution descriptors
  kFakeHeuristicQueries,    // cudnnGetConvolutionForwardAlgorithm_v7
  kFakeAlgorithmSearches,   // cudnnFindConvolutionForwardAlgorithmEx, failed ones too
  kFakeWorkspaceQueries,    // cudnnGetConvolutionForwardWorkspaceSize
  kFakeCudnnCounters,
};

struct FakeConvolutionCall {
  int data_type = -1, filter_data_type = -1, output_data_type = -1;
  int rank = 0;  // of the tensors: spatial dimensions + 2
  int input_dims[kFakeCudnnMaxRank] = {}, input_strides[kFakeCudnnMaxRank] = {};
  int output_dims[kFakeCudnnMaxRank] = {}, output_strides[kFakeCudnnMaxRank] = {};
  int filter_dims[kFakeCudnnMaxRank] = {};
  int filter_format = -1;
  int padding[kFakeCudnnMaxRank - 2] = {}, strides[kFakeCudnnMaxRank - 2] = {},
                                  dilations[kFakeCudnnMaxRank - 2] = {};
  int mode = -1, compute_type = -1, groups = 0, math = -1;
  int algo = -1;
  size_t workspace_bytes = 0;
  void* stream = nullptr;     // the handle's, at the call
  void* workspace = nullptr;  // the workspace's address
};

using ForwardCountHook = int (*)();
using ForwardHook = int (*)(int, FakeConvolutionCall*);
using FailNextHook = void (*)(int);
using LiveCountHook = int (*)();
using CallCountHook = int (*)(int counter);
using FailNextSearchHook = void (*)(int);

}  // namespace kiln::cuda::fake
