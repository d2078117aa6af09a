#include "backends/vulkan/vulkan_buffer.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>

#include "backends/vulkan/vulkan_commands.h"
#include "backends/vulkan/vulkan_loader.h"

namespace kiln::vulkan {

StatusOr<std::shared_ptr<Buffer>> Buffer::Create(std::shared_ptr<Device> device, uint64_t size_bytes,
                                                 BufferKind kind) {
  const DeviceFeatures& limits = device->features();
  const char* what = kind == BufferKind::kStorage ? "storage buffer" : "staging buffer";
  if (kind == BufferKind::kStorage && size_bytes > limits.max_storage_buffer_range) {
    return ResourceExhausted("vulkan: a ", what, " of ", size_bytes, " bytes is larger than the device's ",
                             "maxStorageBufferRange of ", limits.max_storage_buffer_range,
                             " bytes (the most one shader binding can cover) on ", device->info().name);
  }
  if (limits.max_allocation_bytes != 0 && size_bytes > limits.max_allocation_bytes) {
    return ResourceExhausted("vulkan: a ", what, " of ", size_bytes, " bytes is larger than the device's ",
                             "maxMemoryAllocationSize of ", limits.max_allocation_bytes, " bytes on ",
                             device->info().name);
  }
  std::shared_ptr<Buffer> buffer(new Buffer());
  buffer->device_ = device;
  buffer->kind_ = kind;
  buffer->size_ = size_bytes;
  // At least 4 bytes so an empty buffer can still be bound (Vulkan has no
  // zero-sized buffers), a multiple of 4 so fills and bindings may cover all
  // of it, and a size class so that freed memory fits later requests.
  uint64_t largest = limits.max_allocation_bytes != 0 ? limits.max_allocation_bytes : UINT64_MAX;
  if (kind == BufferKind::kStorage) largest = std::min(largest, limits.max_storage_buffer_range);
  buffer->allocated_size_ = AllocationClass(size_bytes, largest);
  if (std::optional<Allocation> idle = device->memory_cache().Take(kind, buffer->allocated_size_)) {
    buffer->buffer_ = idle->buffer;
    buffer->memory_ = idle->memory;
    buffer->mapped_ = idle->mapped;
    buffer->coherent_ = idle->coherent;
    return buffer;
  }

  const DeviceFunctions& api = device->api();
  VkBufferCreateInfo create{};
  create.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  create.size = buffer->allocated_size_;
  create.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  if (kind == BufferKind::kStorage) create.usage |= VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  create.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  KILN_RETURN_IF_ERROR(Check(api.vkCreateBuffer(device->handle(), &create, nullptr, &buffer->buffer_),
                             "vkCreateBuffer (" + std::to_string(size_bytes) + " bytes)"));
  VkMemoryRequirements requirements{};
  api.vkGetBufferMemoryRequirements(device->handle(), buffer->buffer_, &requirements);
  KILN_ASSIGN_OR_RETURN(uint32_t memory_type,
                        device->MemoryTypeFor(requirements.memoryTypeBits, kind == BufferKind::kStaging));
  const uint64_t heap = device->HeapBytes(memory_type);
  if (requirements.size > heap) {
    return ResourceExhausted("vulkan: a ", what, " of ", size_bytes,
                             " bytes is larger than the memory heap of ", heap,
                             " bytes it would come from on ", device->info().name);
  }
  VkMemoryAllocateInfo allocate{};
  allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  allocate.allocationSize = requirements.size;
  allocate.memoryTypeIndex = memory_type;
  VkResult allocated = api.vkAllocateMemory(device->handle(), &allocate, nullptr, &buffer->memory_);
  if (allocated == VK_ERROR_OUT_OF_DEVICE_MEMORY || allocated == VK_ERROR_OUT_OF_HOST_MEMORY) {
    // Memory idle in the cache may be what is missing.
    device->ReleaseIdleMemory();
    allocated = api.vkAllocateMemory(device->handle(), &allocate, nullptr, &buffer->memory_);
  }
  KILN_RETURN_IF_ERROR(Check(
      allocated, "vkAllocateMemory (" + std::to_string(requirements.size) + " bytes for a " + what + ")"));
  device->CountMemoryAllocation();
  KILN_RETURN_IF_ERROR(Check(api.vkBindBufferMemory(device->handle(), buffer->buffer_, buffer->memory_, 0),
                             "vkBindBufferMemory"));
  if (kind == BufferKind::kStaging || device->buffers_host_visible()) {
    // Mapped once for the buffer's life: mapping per transfer costs a
    // system call on some drivers.
    KILN_RETURN_IF_ERROR(
        Check(api.vkMapMemory(device->handle(), buffer->memory_, 0, VK_WHOLE_SIZE, 0, &buffer->mapped_),
              "vkMapMemory"));
    buffer->coherent_ = device->IsCoherent(memory_type);
  }
  return buffer;
}

Buffer::~Buffer() {
  if (buffer_ != VK_NULL_HANDLE && memory_ != VK_NULL_HANDLE &&
      device_->memory_cache().Keep(kind_, Allocation{buffer_, memory_, mapped_, coherent_, allocated_size_}))
    return;
  const DeviceFunctions& api = device_->api();
  if (mapped_ != nullptr) api.vkUnmapMemory(device_->handle(), memory_);
  if (buffer_ != VK_NULL_HANDLE) api.vkDestroyBuffer(device_->handle(), buffer_, nullptr);
  if (memory_ != VK_NULL_HANDLE) api.vkFreeMemory(device_->handle(), memory_, nullptr);
}

Status Buffer::CheckRange(uint64_t size, uint64_t offset, const char* what) const {
  if (offset > size_ || size > size_ - offset) {
    return OutOfRange("vulkan: ", what, " of ", size, " bytes at offset ", offset,
                      " does not fit in a buffer of ", size_, " bytes");
  }
  return OkStatus();
}

Status Buffer::Upload(const void* data, uint64_t size, uint64_t offset) {
  KILN_RETURN_IF_ERROR(CheckRange(size, offset, "an upload"));
  if (size == 0) return OkStatus();
  if (mapped_ != nullptr) {
    std::memcpy(static_cast<char*>(mapped_) + offset, data, size);
    if (!coherent_) {
      // The whole allocation: always a legal range whatever nonCoherentAtomSize is.
      VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr, memory_, 0, VK_WHOLE_SIZE};
      KILN_RETURN_IF_ERROR(Check(device_->api().vkFlushMappedMemoryRanges(device_->handle(), 1, &range),
                                 "vkFlushMappedMemoryRanges"));
    }
    return OkStatus();
  }
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> staging, Create(device_, size, BufferKind::kStaging));
  KILN_RETURN_IF_ERROR(staging->Upload(data, size, 0));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<CommandList> commands, CommandList::Create(device_));
  // A shared_ptr to this buffer that does not own it: the copy completes
  // before Upload returns.
  std::shared_ptr<Buffer> self(std::shared_ptr<Buffer>(), this);
  KILN_RETURN_IF_ERROR(commands->Copy(staging, 0, self, offset, size));
  return commands->SubmitAndWait();
}

Status Buffer::Download(void* data, uint64_t size, uint64_t offset) const {
  KILN_RETURN_IF_ERROR(CheckRange(size, offset, "a download"));
  if (size == 0) return OkStatus();
  if (mapped_ != nullptr) {
    if (!coherent_) {
      VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr, memory_, 0, VK_WHOLE_SIZE};
      KILN_RETURN_IF_ERROR(Check(device_->api().vkInvalidateMappedMemoryRanges(device_->handle(), 1, &range),
                                 "vkInvalidateMappedMemoryRanges"));
    }
    std::memcpy(data, static_cast<const char*>(mapped_) + offset, size);
    return OkStatus();
  }
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> staging, Create(device_, size, BufferKind::kStaging));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<CommandList> commands, CommandList::Create(device_));
  std::shared_ptr<Buffer> self(std::shared_ptr<Buffer>(), const_cast<Buffer*>(this));
  KILN_RETURN_IF_ERROR(commands->Copy(self, offset, staging, 0, size));
  KILN_RETURN_IF_ERROR(commands->SubmitAndWait());
  return staging->Download(data, size, 0);
}

}  // namespace kiln::vulkan
