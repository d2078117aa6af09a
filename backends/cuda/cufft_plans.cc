#include "backends/cuda/cufft_plans.h"

#include <string>
#include <utility>

namespace kiln::cuda {

CufftPlans::CufftPlans(const Cufft& cufft, std::shared_ptr<DeviceMemory> memory,
                       std::vector<CufftTransform> transforms)
    : cufft_(cufft),
      memory_(std::move(memory)),
      transforms_(std::move(transforms)),
      free_(transforms_.size()) {}

CufftPlans::~CufftPlans() {
  if (all_.empty() || !memory_->MakeCurrent().ok()) return;
  for (cufftHandle handle : all_) cufft_.api().Destroy(handle);
}

StatusOr<CufftPlan> CufftPlans::Make(const CufftTransform& transform) const {
  CufftPlan plan;
  KILN_RETURN_IF_ERROR(Cufft::Check(cufft_.api().Create(&plan.handle), "cufftCreate"));
  auto made = [&]() -> Status {
    KILN_RETURN_IF_ERROR(
        Cufft::Check(cufft_.api().SetAutoAllocation(plan.handle, 0), "cufftSetAutoAllocation"));
    std::array<int, 3> n = transform.n, inembed = transform.inembed, onembed = transform.onembed;
    size_t work = 0;
    KILN_RETURN_IF_ERROR(Cufft::Check(
        cufft_.api().MakePlanMany(plan.handle, transform.rank, n.data(), inembed.data(), 1, transform.idist,
                                  onembed.data(), 1, transform.odist, transform.type, transform.batch, &work),
        transform.ToString()));
    plan.work_bytes = static_cast<int64_t>(work);
    return OkStatus();
  }();
  if (!made.ok()) {
    cufft_.api().Destroy(plan.handle);
    return made;
  }
  return plan;
}

StatusOr<CufftPlan> CufftPlans::Acquire(size_t index) {
  if (index >= transforms_.size()) return Internal("cuda: fft ", index, " was not planned");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<CufftPlan>& free = free_[index];
    if (!free.empty()) {
      const CufftPlan plan = free.back();
      free.pop_back();
      return plan;
    }
  }
  KILN_ASSIGN_OR_RETURN(const CufftPlan plan, Make(transforms_[index]));
  std::lock_guard<std::mutex> lock(mutex_);
  all_.push_back(plan.handle);
  return plan;
}

void CufftPlans::Release(size_t index, CufftPlan plan) {
  // Not left pointing at a stream its execution is about to destroy.
  (void)cufft_.api().SetStream(plan.handle, nullptr);
  std::lock_guard<std::mutex> lock(mutex_);
  free_[index].push_back(plan);
}

size_t CufftPlans::made() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return all_.size();
}

Status RunCufftTransform(const Cufft& cufft, const CufftTransform& transform, const CufftPlan& plan,
                         CUstream stream, CUdeviceptr input, CUdeviceptr output, const CufftMemory& memory) {
  const CufftFunctions& api = cufft.api();
  KILN_RETURN_IF_ERROR(Cufft::Check(api.SetStream(plan.handle, stream), "cufftSetStream"));
  if (plan.work_bytes > 0) {
    KILN_ASSIGN_OR_RETURN(const CUdeviceptr work, memory.work_area(plan.work_bytes));
    KILN_RETURN_IF_ERROR(
        Cufft::Check(api.SetWorkArea(plan.handle, reinterpret_cast<void*>(work)), "cufftSetWorkArea"));
  }
  if (transform.overwrites_input) {
    KILN_ASSIGN_OR_RETURN(input, memory.input_copy(input, transform.input_bytes));
  }
  void* in = reinterpret_cast<void*>(input);
  void* out = reinterpret_cast<void*>(output);
  cufftResult result = CUFFT_NOT_SUPPORTED;
  switch (transform.type) {
    case CUFFT_C2C: result = api.ExecC2C(plan.handle, in, out, transform.direction); break;
    case CUFFT_Z2Z: result = api.ExecZ2Z(plan.handle, in, out, transform.direction); break;
    case CUFFT_R2C: result = api.ExecR2C(plan.handle, in, out); break;
    case CUFFT_D2Z: result = api.ExecD2Z(plan.handle, in, out); break;
    case CUFFT_C2R: result = api.ExecC2R(plan.handle, in, out); break;
    case CUFFT_Z2D: result = api.ExecZ2D(plan.handle, in, out); break;
    default: return Internal("cuda: ", transform.ToString(), " has no cuFFT exec call");
  }
  return Cufft::Check(result, "cufftExec of " + transform.ToString());
}

}  // namespace kiln::cuda
