// What the fake cuDNN (fake_cudnn.cc) records of each convolution it runs,
// read by tests through its exported hooks:
//   int kiln_fake_cudnn_forward_count(void)                   forward calls so far
//   int kiln_fake_cudnn_forward(int i, FakeConvolutionCall*)  call i (0 when out of range)
//   void kiln_fake_cudnn_fail_next(int status)                the next forward returns `status`
//   int kiln_fake_cudnn_live_handles(void)                    handles created, not destroyed
//   int kiln_fake_cudnn_live_descriptors(void)                descriptors created, not destroyed
#pragma once

#include <cstddef>

namespace kiln::cuda::fake {

inline constexpr int kFakeCudnnMaxRank = 5;

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
  void* stream = nullptr;  // the handle's, at the call
};

using ForwardCountHook = int (*)();
using ForwardHook = int (*)(int, FakeConvolutionCall*);
using FailNextHook = void (*)(int);
using LiveCountHook = int (*)();

}  // namespace kiln::cuda::fake
