// The DeviceBuffer of the CUDA backend: one array, dense row-major, in a
// block of one GPU's memory: Kiln's own, or memory another library lent
// (raw device pointers, DLPack kDLCUDA), given back through a release
// function when the buffer goes.
#pragma once

#include <functional>
#include <memory>

#include "backends/cuda/device_memory.h"
#include "core/backend.h"

namespace kiln::cuda {

class CudaBuffer : public DeviceBuffer {
 public:
  // Zero-sized arrays hold no block (address 0).
  CudaBuffer(Shape shape, Device* device, std::shared_ptr<DeviceMemory> memory, DeviceBlock block)
      : DeviceBuffer(std::move(shape), device), block_(std::move(block)), memory_(std::move(memory)) {}

  // A buffer over `address`, device memory someone else owns on `memory`'s
  // GPU; `release` runs once, when the buffer is destroyed.
  CudaBuffer(Shape shape, Device* device, std::shared_ptr<DeviceMemory> memory, CUdeviceptr address,
             std::function<void()> release)
      : DeviceBuffer(std::move(shape), device),
        lent_address_(address),
        release_(std::move(release)),
        memory_(std::move(memory)) {}
  ~CudaBuffer() override {
    if (release_) release_();
  }

  // A buffer holding `literal` (an array), copied to the GPU.
  static StatusOr<std::unique_ptr<CudaBuffer>> FromLiteral(const Literal& literal, Device* device,
                                                           std::shared_ptr<DeviceMemory> memory);

  CUdeviceptr address() const { return lent_address_ != 0 ? lent_address_ : block_.address(); }
  const std::shared_ptr<DeviceMemory>& memory() const { return memory_; }
  StatusOr<Literal> ToLiteral() const override;
  std::optional<GpuMemoryAddress> cuda_memory() const override {
    return GpuMemoryAddress{memory_->ordinal(), static_cast<uint64_t>(address())};
  }

 private:
  DeviceBlock block_;
  CUdeviceptr lent_address_ = 0;  // memory someone else owns, when not 0
  std::function<void()> release_;
  std::shared_ptr<DeviceMemory> memory_;
};

}  // namespace kiln::cuda
