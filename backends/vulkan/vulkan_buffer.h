// Device buffers. Storage buffers live in device-local memory; the host
// reaches them by mapping when that memory is host-visible (lavapipe,
// integrated GPUs) and otherwise through a temporary staging buffer and a
// copy on the queue. Staging buffers are host-visible buffers the host maps.
#pragma once

#include <cstdint>
#include <memory>

#include "backends/vulkan/vulkan_api.h"
#include "backends/vulkan/vulkan_device.h"
#include "backends/vulkan/vulkan_memory_cache.h"
#include "core/status.h"

namespace kiln::vulkan {

class Buffer {
 public:
  // A buffer of `size_bytes` (0 is allowed: it still has an allocation, so
  // it can be bound), taking an idle allocation of its size class from the
  // device's memory cache when there is one. A storage buffer larger than the
  // device's maxStorageBufferRange, or any buffer larger than its
  // maxMemoryAllocationSize or memory heap, is RESOURCE_EXHAUSTED with a
  // message naming the size and the limit.
  static StatusOr<std::shared_ptr<Buffer>> Create(std::shared_ptr<Device> device, uint64_t size_bytes,
                                                  BufferKind kind = BufferKind::kStorage);
  // Leaves the allocation in the device's memory cache, or frees it when
  // the cache is full.
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  uint64_t size() const { return size_; }
  // What is allocated and bound: size()'s class (AllocationClass), a
  // multiple of 4 and at least 4.
  uint64_t allocated_size() const { return allocated_size_; }
  VkBuffer handle() const { return buffer_; }
  Device& device() const { return *device_; }
  BufferKind kind() const { return kind_; }
  // The mapped memory when the host may write and read it directly, else null.
  void* mapped() const { return mapped_; }

  // Copies `size` bytes between host memory and [offset, offset + size) of
  // the buffer, waiting until the copy is done. OUT_OF_RANGE when the range
  // exceeds size(). No dispatch that uses the buffer may be in flight.
  // Thread-safe for distinct buffers.
  Status Upload(const void* data, uint64_t size, uint64_t offset = 0);
  Status Download(void* data, uint64_t size, uint64_t offset = 0) const;

 private:
  Buffer() = default;
  Status CheckRange(uint64_t size, uint64_t offset, const char* what) const;

  std::shared_ptr<Device> device_;
  BufferKind kind_ = BufferKind::kStorage;
  uint64_t size_ = 0;
  uint64_t allocated_size_ = 0;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  void* mapped_ = nullptr;
  bool coherent_ = true;
};

}  // namespace kiln::vulkan
