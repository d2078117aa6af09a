#include "backends/cuda/device_memory.h"

namespace kiln::cuda {
namespace {

// Freed blocks kept for reuse, at most this many bytes per device.
constexpr int64_t kMaxCachedBytes = int64_t{1} << 30;

}  // namespace

StatusOr<std::shared_ptr<DeviceMemory>> DeviceMemory::Open(const Driver& driver, int ordinal) {
  CUdevice device = 0;
  KILN_RETURN_IF_ERROR(driver.Check(driver.api().DeviceGet(&device, ordinal), "cuDeviceGet"));
  CUcontext context = nullptr;
  KILN_RETURN_IF_ERROR(
      driver.Check(driver.api().DevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain"));
  return std::shared_ptr<DeviceMemory>(new DeviceMemory(driver, ordinal, device, context));
}

DeviceMemory::~DeviceMemory() {
  if (MakeCurrent().ok()) ReleaseCache();
  driver_.api().DevicePrimaryCtxRelease(device_);
}

Status DeviceMemory::MakeCurrent() const {
  return driver_.Check(driver_.api().CtxSetCurrent(context_), "cuCtxSetCurrent");
}

StatusOr<CUdeviceptr> DeviceMemory::Allocate(int64_t bytes) {
  if (bytes <= 0) return InvalidArgument("cuda: allocation of ", bytes, " bytes");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = cache_.find(bytes);
    if (found != cache_.end()) {
      const CUdeviceptr address = found->second;
      cache_.erase(found);
      cached_bytes_ -= bytes;
      return address;
    }
  }
  KILN_RETURN_IF_ERROR(MakeCurrent());
  CUdeviceptr address = 0;
  CUresult result = driver_.api().MemAlloc(&address, static_cast<size_t>(bytes));
  if (result == CUDA_ERROR_OUT_OF_MEMORY) {
    // Cached blocks of other sizes may be what the device is short of.
    ReleaseCache();
    result = driver_.api().MemAlloc(&address, static_cast<size_t>(bytes));
  }
  if (result != CUDA_SUCCESS) {
    Status status = driver_.Check(result, "cuMemAlloc of " + std::to_string(bytes) + " bytes");
    return Status(status.code(), status.message() + " on GPU " + std::to_string(ordinal_));
  }
  return address;
}

void DeviceMemory::Free(CUdeviceptr address, int64_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cached_bytes_ + bytes <= kMaxCachedBytes) {
      cache_.emplace(bytes, address);
      cached_bytes_ += bytes;
      return;
    }
  }
  if (MakeCurrent().ok()) driver_.api().MemFree(address);
}

void DeviceMemory::ReleaseCache() {
  std::multimap<int64_t, CUdeviceptr> blocks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    blocks.swap(cache_);
    cached_bytes_ = 0;
  }
  for (const auto& [bytes, address] : blocks) driver_.api().MemFree(address);
}

int64_t DeviceMemory::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cached_bytes_;
}

StatusOr<DeviceBlock> DeviceBlock::Allocate(std::shared_ptr<DeviceMemory> memory, int64_t bytes) {
  KILN_ASSIGN_OR_RETURN(CUdeviceptr address, memory->Allocate(bytes));
  return DeviceBlock(std::move(memory), address, bytes);
}

}  // namespace kiln::cuda
