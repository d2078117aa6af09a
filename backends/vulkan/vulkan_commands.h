// A recording of device work: dispatches, buffer copies and fills, in order,
// submitted once to the device's queue and waited on with a fence. Each step
// may depend on every earlier one: a full memory barrier separates
// consecutive steps (conservative; tracking which buffers each step reads
// and writes would let independent dispatches overlap, a later refinement),
// and a final barrier makes the results visible to the host.
//
// A CommandList is used by one thread at a time; any number of them may be
// recorded and submitted from different threads at once (each has its own
// command pool; the queue is guarded by the device). It holds references to
// the kernels and buffers it uses until it is destroyed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "backends/vulkan/vulkan_api.h"
#include "backends/vulkan/vulkan_buffer.h"
#include "backends/vulkan/vulkan_device.h"
#include "backends/vulkan/vulkan_kernel.h"
#include "core/status.h"

namespace kiln::vulkan {

// Part of a storage buffer bound to a shader binding: [offset, offset +
// size), where size 0 means "to the end of the buffer". The offset must be a
// multiple of the device's minStorageBufferOffsetAlignment.
struct BufferRange {
  std::shared_ptr<Buffer> buffer;
  uint64_t offset = 0;
  uint64_t size = 0;
};

class CommandList {
 public:
  static StatusOr<std::unique_ptr<CommandList>> Create(std::shared_ptr<Device> device);
  // Waits for submitted work before it frees the command buffer.
  ~CommandList();
  CommandList(const CommandList&) = delete;
  CommandList& operator=(const CommandList&) = delete;

  // Runs `kernel` over groups[0] x groups[1] x groups[2] workgroups with
  // `buffers` at bindings 0.. (exactly kernel.buffer_count() of them) and
  // `push_constants` (exactly kernel.push_constant_bytes() bytes). A group
  // count of 0 in any dimension records nothing. INVALID_ARGUMENT when the
  // counts or the sizes disagree or exceed the device's limits.
  Status Dispatch(const std::shared_ptr<Kernel>& kernel, std::span<const std::shared_ptr<Buffer>> buffers,
                  std::span<const std::byte> push_constants, std::array<uint32_t, 3> groups);
  // The same with parts of buffers at the bindings (several slots of one
  // scratch buffer, say). INVALID_ARGUMENT when a range leaves its buffer or
  // its offset breaks the device's alignment.
  Status Dispatch(const std::shared_ptr<Kernel>& kernel, std::span<const BufferRange> ranges,
                  std::span<const std::byte> push_constants, std::array<uint32_t, 3> groups);
  // Copies `size` bytes from src[src_offset..] to dst[dst_offset..].
  Status Copy(const std::shared_ptr<Buffer>& src, uint64_t src_offset, const std::shared_ptr<Buffer>& dst,
              uint64_t dst_offset, uint64_t size);
  // Writes the 32-bit `value` repeatedly over [offset, offset + size) of
  // `buffer`; offset and size are multiples of 4.
  Status Fill(const std::shared_ptr<Buffer>& buffer, uint64_t offset, uint64_t size, uint32_t value);

  // Ends the recording and submits it; nothing can be recorded after.
  Status Submit();
  // Waits until the submitted work is done (OK at once when it already is).
  Status Wait();
  Status SubmitAndWait();

  size_t steps() const { return steps_; }

 private:
  explicit CommandList(std::shared_ptr<Device> device) : device_(std::move(device)) {}
  Status BeginStep(const char* what);

  std::shared_ptr<Device> device_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer commands_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  // Descriptor pools of the dispatches, on devices without push descriptors.
  std::vector<VkDescriptorPool> descriptor_pools_;
  std::vector<std::shared_ptr<Kernel>> kernels_;
  std::vector<std::shared_ptr<Buffer>> buffers_;
  size_t steps_ = 0;
  bool submitted_ = false;
  bool completed_ = false;
};

}  // namespace kiln::vulkan
