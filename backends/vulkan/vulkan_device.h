// A Vulkan logical device with one compute queue: the optional features
// Kiln knows (vulkan_device_features.h) enabled where the device has them,
// the memory types buffers use, a pipeline cache, and thread-safe queue
// submission. Shared (std::shared_ptr) by the buffers, kernels and command
// lists made on it, which keep it alive.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "backends/vulkan/shader_features.h"
#include "backends/vulkan/vulkan_api.h"
#include "backends/vulkan/vulkan_device_features.h"
#include "backends/vulkan/vulkan_memory_cache.h"
#include "backends/vulkan/vulkan_physical_device.h"
#include "core/status.h"

namespace kiln::vulkan {

class Device {
 public:
  // Opens `info` (one of Instance::Get()->devices()). Environment:
  // KILN_VULKAN_NO_PUSH_DESCRIPTORS=1 binds buffers through descriptor pools
  // even where push descriptors exist, and KILN_VULKAN_FORCE_STAGING=1 moves
  // data through staging buffers even where device memory is host-visible;
  // both exist so that lavapipe can test the paths discrete GPUs take.
  static StatusOr<std::shared_ptr<Device>> Open(const PhysicalDeviceInfo& info);

  // The process-wide device Instance::ChooseDevice() picks, opened on the
  // first call; the same error on every call when that failed. Thread-safe.
  static StatusOr<std::shared_ptr<Device>> Default();

  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceFunctions& api() const { return api_; }
  VkDevice handle() const { return device_; }
  const PhysicalDeviceInfo& info() const { return info_; }
  // What shaders may use on this device (everything listed is enabled).
  const DeviceFeatures& features() const { return features_; }
  // The same, as the GLSL code generator takes it, with the driver's known
  // limits (lavapipe's bound on loop iterations).
  ShaderFeatures shader_features() const;
  uint32_t queue_family() const { return queue_family_; }
  VkPipelineCache pipeline_cache() const { return pipeline_cache_; }

  // Whether buffers live in memory the host maps directly (lavapipe,
  // integrated GPUs) instead of being reached through staging copies.
  bool buffers_host_visible() const { return buffers_host_visible_; }

  // The memory type for a buffer whose requirements allow `type_bits`:
  // device-local (and host-visible when buffers_host_visible()) for
  // storage, host-visible and coherent for staging. INTERNAL when none fits.
  StatusOr<uint32_t> MemoryTypeFor(uint32_t type_bits, bool staging) const;
  // The size of the heap a memory type draws from.
  uint64_t HeapBytes(uint32_t memory_type) const;
  // Whether a memory type is HOST_COHERENT (else mapped writes need flushes).
  bool IsCoherent(uint32_t memory_type) const;

  // Submits one command buffer to the queue, signalling `fence` when it
  // completes. Thread-safe (the queue is guarded by a mutex).
  Status Submit(VkCommandBuffer commands, VkFence fence) const;
  // Submissions to the queue so far (what an execution's host round trips
  // cost is visible in tests).
  uint64_t submissions() const { return submissions_.load(); }

  // Where dying buffers leave their memory for the next buffer of their
  // size class (at most a quarter of the largest device-local heap, and at
  // most 1 GiB, idle). Thread-safe.
  MemoryCache& memory_cache() const { return *memory_cache_; }
  // Frees every idle allocation: when the device refuses an allocation, and
  // before the device goes.
  void ReleaseIdleMemory() const;
  // vkAllocateMemory calls made for buffers so far (what the cache saves is
  // visible in tests).
  uint64_t memory_allocations() const { return memory_allocations_.load(); }
  void CountMemoryAllocation() const { memory_allocations_.fetch_add(1); }

  // A command pool with its one primary command buffer and a fence: what a
  // command list records and waits with. Finished lists leave theirs here,
  // reset, for the next list (creating them costs each execute otherwise);
  // at most kIdleCommandResources wait. Thread-safe.
  struct CommandResources {
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer commands = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
  };
  static constexpr size_t kIdleCommandResources = 16;
  std::optional<CommandResources> TakeCommandResources() const;
  // False when enough wait already: the caller destroys them.
  bool KeepCommandResources(const CommandResources& resources) const;
  // Command pools created so far (what reuse saves is visible in tests).
  uint64_t command_pools_created() const { return command_pools_created_.load(); }
  void CountCommandPool() const { command_pools_created_.fetch_add(1); }

 private:
  Device() = default;

  DeviceFunctions api_;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  PhysicalDeviceInfo info_;
  DeviceFeatures features_;
  VkPhysicalDeviceMemoryProperties memory_{};
  bool buffers_host_visible_ = false;
  mutable std::mutex queue_mutex_;
  mutable std::atomic<uint64_t> submissions_{0};
  std::unique_ptr<MemoryCache> memory_cache_;
  mutable std::atomic<uint64_t> memory_allocations_{0};
  mutable std::mutex command_resources_mutex_;
  mutable std::vector<CommandResources> idle_command_resources_;
  mutable std::atomic<uint64_t> command_pools_created_{0};
};

}  // namespace kiln::vulkan
