// The DeviceBuffer of the Vulkan backend: one array, dense row-major, in a
// storage buffer of the backend's device.
#pragma once

#include <memory>

#include "backends/vulkan/vulkan_buffer.h"
#include "core/backend.h"

namespace kiln::vulkan {

class VulkanArray : public DeviceBuffer {
 public:
  VulkanArray(Shape shape, kiln::Device* device, std::shared_ptr<Buffer> buffer)
      : DeviceBuffer(std::move(shape), device), buffer_(std::move(buffer)) {}

  // A new buffer on `vulkan` holding `literal` (an array).
  static StatusOr<std::unique_ptr<VulkanArray>> FromLiteral(const Literal& literal, kiln::Device* device,
                                                            const std::shared_ptr<Device>& vulkan);

  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
  StatusOr<Literal> ToLiteral() const override;

 private:
  std::shared_ptr<Buffer> buffer_;
};

}  // namespace kiln::vulkan
