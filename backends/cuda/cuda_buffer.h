// The DeviceBuffer of the CUDA backend: one array, dense row-major, in a
// block of one GPU's memory.
#pragma once

#include <memory>

#include "backends/cuda/device_memory.h"
#include "core/backend.h"

namespace kiln::cuda {

class CudaBuffer : public DeviceBuffer {
 public:
  // Zero-sized arrays hold no block (address 0).
  CudaBuffer(Shape shape, Device* device, std::shared_ptr<DeviceMemory> memory, DeviceBlock block)
      : DeviceBuffer(std::move(shape), device), block_(std::move(block)), memory_(std::move(memory)) {}

  // A buffer holding `literal` (an array), copied to the GPU.
  static StatusOr<std::unique_ptr<CudaBuffer>> FromLiteral(const Literal& literal, Device* device,
                                                           std::shared_ptr<DeviceMemory> memory);

  CUdeviceptr address() const { return block_.address(); }
  const std::shared_ptr<DeviceMemory>& memory() const { return memory_; }
  StatusOr<Literal> ToLiteral() const override;

 private:
  DeviceBlock block_;
  std::shared_ptr<DeviceMemory> memory_;
};

}  // namespace kiln::cuda
