// The cuFFT plans of one executable. Making a plan is expensive (cuFFT
// chooses and may compile kernels), so each fft of the program gets its
// plans once and keeps them; a plan is used by one execution at a time
// (it is bound to that execution's stream and work area), so concurrent
// executions each take a plan of their own from the fft's pool, made on
// demand, and give it back when they end. Plans are made without cuFFT's
// own work area (cufftSetAutoAllocation 0): each run sets the execution's
// library workspace (workspace_pool.h) as the work area.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "backends/cuda/cufft_library.h"
#include "backends/cuda/cufft_transform.h"
#include "backends/cuda/device_memory.h"
#include "core/status.h"

namespace kiln::cuda {

// A plan of one transform and the work area it needs.
struct CufftPlan {
  cufftHandle handle = 0;
  int64_t work_bytes = 0;
};

class CufftPlans {
 public:
  // The plans of `transforms` (the program's, by index), made with `cufft`
  // in `memory`'s context.
  CufftPlans(const Cufft& cufft, std::shared_ptr<DeviceMemory> memory,
             std::vector<CufftTransform> transforms);
  ~CufftPlans();
  CufftPlans(const CufftPlans&) = delete;
  CufftPlans& operator=(const CufftPlans&) = delete;

  // A plan of transform `index` for the caller alone: a free one, else a
  // new one. The GPU's context must be current. Thread-safe.
  StatusOr<CufftPlan> Acquire(size_t index);
  // Gives `plan` of transform `index`, whose stream's work is done, back.
  void Release(size_t index, CufftPlan plan);

  // How many plans were made so far (for tests).
  size_t made() const;

  const Cufft& cufft() const { return cufft_; }
  const CufftTransform& transform(size_t index) const { return transforms_[index]; }

 private:
  StatusOr<CufftPlan> Make(const CufftTransform& transform) const;

  const Cufft& cufft_;
  std::shared_ptr<DeviceMemory> memory_;
  std::vector<CufftTransform> transforms_;
  mutable std::mutex mutex_;
  std::vector<std::vector<CufftPlan>> free_;  // per transform
  std::vector<cufftHandle> all_;
};

// Where a run's memory comes from: the work area of at least `bytes`
// (called only when the plan needs one), and a scratch copy of the input
// for the transforms that overwrite it.
struct CufftMemory {
  std::function<StatusOr<CUdeviceptr>(int64_t bytes)> work_area;
  std::function<StatusOr<CUdeviceptr>(CUdeviceptr input, int64_t bytes)> input_copy;
};

// Queues `transform` with `plan` on `stream`: `input` is the fft's operand,
// `output` its result, dense row-major in device memory. An error names
// the cuFFT call, the result and the transform.
Status RunCufftTransform(const Cufft& cufft, const CufftTransform& transform, const CufftPlan& plan,
                         CUstream stream, CUdeviceptr input, CUdeviceptr output, const CufftMemory& memory);

}  // namespace kiln::cuda
