// Device memory of one GPU: a context (the device's primary context) and a
// caching allocator over cuMemAlloc, since cuMemFree synchronises the whole
// device and executions allocate their temporaries every time. Shared (by
// shared_ptr) by the backend, its executables and every buffer, so that
// buffers may outlive the backend that made them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/cuda/cuda_driver.h"
#include "core/status.h"

namespace kiln::cuda {

class DeviceMemory {
 public:
  // Retains `ordinal`'s primary context.
  static StatusOr<std::shared_ptr<DeviceMemory>> Open(const Driver& driver, int ordinal);
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  const Driver& driver() const { return driver_; }
  int ordinal() const { return ordinal_; }
  // Makes the context current on the calling thread (cheap; every public
  // entry point that talks to the driver calls it first).
  Status MakeCurrent() const;

  // `bytes` (> 0) of device memory, from the cache when a block of that
  // size was freed; RESOURCE_EXHAUSTED naming cuMemAlloc when the device
  // has no more.
  StatusOr<CUdeviceptr> Allocate(int64_t bytes);
  // Returns a block to the cache (or the driver, past the cache's bound).
  void Free(CUdeviceptr address, int64_t bytes);

  // Bytes held in the cache, for tests.
  int64_t cached_bytes() const;

 private:
  DeviceMemory(const Driver& driver, int ordinal, CUdevice device, CUcontext context)
      : driver_(driver), ordinal_(ordinal), device_(device), context_(context) {}
  void ReleaseCache();

  const Driver& driver_;
  int ordinal_;
  CUdevice device_;
  CUcontext context_;
  mutable std::mutex mutex_;
  std::multimap<int64_t, CUdeviceptr> cache_;  // free blocks by size
  int64_t cached_bytes_ = 0;
};

// An owned block of device memory, returned to its DeviceMemory on
// destruction.
class DeviceBlock {
 public:
  DeviceBlock() = default;
  DeviceBlock(std::shared_ptr<DeviceMemory> memory, CUdeviceptr address, int64_t bytes)
      : memory_(std::move(memory)), address_(address), bytes_(bytes) {}
  ~DeviceBlock() { Reset(); }
  DeviceBlock(DeviceBlock&& other) noexcept { *this = std::move(other); }
  DeviceBlock& operator=(DeviceBlock&& other) noexcept {
    if (this != &other) {
      Reset();
      memory_ = std::move(other.memory_);
      address_ = other.address_;
      bytes_ = other.bytes_;
      other.address_ = 0;
      other.bytes_ = 0;
    }
    return *this;
  }
  static StatusOr<DeviceBlock> Allocate(std::shared_ptr<DeviceMemory> memory, int64_t bytes);

  CUdeviceptr address() const { return address_; }
  int64_t bytes() const { return bytes_; }

 private:
  void Reset() {
    if (memory_ != nullptr && address_ != 0) memory_->Free(address_, bytes_);
    memory_.reset();
    address_ = 0;
  }
  std::shared_ptr<DeviceMemory> memory_;
  CUdeviceptr address_ = 0;
  int64_t bytes_ = 0;
};

}  // namespace kiln::cuda
