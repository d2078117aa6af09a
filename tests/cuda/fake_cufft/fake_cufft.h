// What the fake cuFFT (fake_cufft.cc) records of each plan and execution,
// read by tests through its exported hooks:
//   int kiln_fake_cufft_plan_count(void)              plans made so far
//   int kiln_fake_cufft_plan(int i, FakeFftPlan*)     plan i (0 when out of range)
//   int kiln_fake_cufft_exec_count(void)              executions so far
//   int kiln_fake_cufft_exec(int i, FakeFftExec*)     execution i (0 when out of range)
//   int kiln_fake_cufft_exec_output(int i, void*, size_t)  copies execution i's
//       output as it wrote it (0 when out of range or the size differs)
//   int kiln_fake_cufft_live_plans(void)              handles created, not destroyed
#pragma once

#include <cstddef>

namespace kiln::cuda::fake {

struct FakeFftPlan {
  int handle = 0;
  int rank = 0;
  int n[3] = {0, 0, 0};
  int inembed[3] = {0, 0, 0}, onembed[3] = {0, 0, 0};
  int istride = 0, idist = 0, ostride = 0, odist = 0;
  int type = 0;
  int batch = 0;
  int auto_allocation = 1;  // at the time the plan was made
  size_t work_bytes = 0;    // what it asked for
};

struct FakeFftExec {
  int handle = 0;
  int type = 0;
  int direction = 0;  // C2C and Z2Z only
  const void* input = nullptr;
  void* output = nullptr;
  void* stream = nullptr;
  void* work_area = nullptr;
  size_t output_bytes = 0;
};

}  // namespace kiln::cuda::fake
