#include "backends/vulkan/vulkan_device.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "backends/vulkan/vulkan_instance.h"
#include "backends/vulkan/vulkan_loader.h"

namespace kiln::vulkan {
namespace {

// A queue family that computes, preferring one without graphics: on GPUs
// with both, the dedicated compute family runs beside any rendering.
StatusOr<uint32_t> ChooseQueueFamily(const InstanceFunctions& api, const PhysicalDeviceInfo& info) {
  uint32_t count = 0;
  api.vkGetPhysicalDeviceQueueFamilyProperties(info.handle, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  api.vkGetPhysicalDeviceQueueFamilyProperties(info.handle, &count, families.data());
  families.resize(count);
  int best = -1;
  for (uint32_t i = 0; i < count; ++i) {
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) == 0 || families[i].queueCount == 0) continue;
    if (best < 0 || (families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) == 0) best = static_cast<int>(i);
    if ((families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) == 0) break;
  }
  if (best < 0) return Unavailable("vulkan: the device ", info.name, " has no compute queue");
  return static_cast<uint32_t>(best);
}

}  // namespace

StatusOr<std::shared_ptr<Device>> Device::Open(const PhysicalDeviceInfo& info) {
  KILN_ASSIGN_OR_RETURN(const Instance* instance, Instance::Get());
  const InstanceFunctions& iapi = instance->api();
  std::shared_ptr<Device> device(new Device());
  device->info_ = info;
  device->features_ = info.features;
  KILN_ASSIGN_OR_RETURN(device->queue_family_, ChooseQueueFamily(iapi, info));
  iapi.vkGetPhysicalDeviceMemoryProperties(info.handle, &device->memory_);

  // Enable exactly the optional features Kiln knows and the device has
  // (not everything the device has: robustBufferAccess and the like cost
  // speed on some GPUs).
  const bool maintenance4_core = info.effective_api_version >= VK_API_VERSION_1_3;
  const DeviceFeatures& has = info.features;
  FeatureChain enabled(has.maintenance4, has.float32_atomic_add || has.float64_atomic_add);
  enabled.features2.features.shaderFloat64 = has.f64;
  enabled.features2.features.shaderInt64 = has.i64;
  enabled.features2.features.shaderInt16 = has.i16;
  enabled.vulkan11.storageBuffer16BitAccess = has.storage16;
  enabled.vulkan12.shaderFloat16 = has.f16;
  enabled.vulkan12.shaderInt8 = has.i8;
  enabled.vulkan12.storageBuffer8BitAccess = has.storage8;
  enabled.vulkan12.shaderBufferInt64Atomics = has.int64_atomics;
  enabled.vulkan12.timelineSemaphore = has.timeline_semaphore;
  enabled.maintenance4.maintenance4 = has.maintenance4;
  enabled.atomic_float.shaderBufferFloat32AtomicAdd = has.float32_atomic_add;
  enabled.atomic_float.shaderBufferFloat64AtomicAdd = has.float64_atomic_add;
  std::vector<const char*> extensions;
  if (has.maintenance4 && !maintenance4_core) extensions.push_back(VK_KHR_MAINTENANCE_4_EXTENSION_NAME);
  if (has.float32_atomic_add || has.float64_atomic_add) {
    extensions.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  }
  if (info.has_push_descriptor_extension && !EnvFlag("KILN_VULKAN_NO_PUSH_DESCRIPTORS")) {
    extensions.push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  } else {
    device->features_.push_descriptors = false;
  }

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue{};
  queue.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  queue.queueFamilyIndex = device->queue_family_;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;
  VkDeviceCreateInfo create{};
  create.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  create.pNext = &enabled.features2;
  create.queueCreateInfoCount = 1;
  create.pQueueCreateInfos = &queue;
  create.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  create.ppEnabledExtensionNames = extensions.data();
  // A driver may load more libraries for a device (e.g. its compiler).
  const std::vector<std::string> libraries_before = LoadedLibraries();
  KILN_RETURN_IF_ERROR(Check(iapi.vkCreateDevice(info.handle, &create, nullptr, &device->device_),
                             "vkCreateDevice (" + info.name + ")"));

  PinLibrariesLoadedSince(libraries_before);
  VkDevice handle = device->device_;
#define KILN_VULKAN_RESOLVE_DEVICE(fn)                                                               \
  device->api_.fn = reinterpret_cast<PFN_##fn>(iapi.vkGetDeviceProcAddr(handle, #fn));               \
  if (device->api_.fn == nullptr) {                                                                  \
    return Unavailable("vulkan: the driver of ", info.name, " has no ", #fn, "; update the driver"); \
  }
  KILN_VULKAN_DEVICE_FUNCTIONS(KILN_VULKAN_RESOLVE_DEVICE)
#undef KILN_VULKAN_RESOLVE_DEVICE
  if (device->features_.push_descriptors) {
    device->api_.vkCmdPushDescriptorSetKHR = reinterpret_cast<PFN_vkCmdPushDescriptorSetKHR>(
        iapi.vkGetDeviceProcAddr(handle, "vkCmdPushDescriptorSetKHR"));
    if (device->api_.vkCmdPushDescriptorSetKHR == nullptr) device->features_.push_descriptors = false;
  }
  device->api_.vkGetDeviceQueue(handle, device->queue_family_, 0, &device->queue_);

  VkPipelineCacheCreateInfo cache{};
  cache.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO;
  KILN_RETURN_IF_ERROR(
      Check(device->api_.vkCreatePipelineCache(handle, &cache, nullptr, &device->pipeline_cache_),
            "vkCreatePipelineCache"));

  // Direct mapping where device memory is host memory anyway (a CPU device,
  // an integrated GPU) and a device-local type is host-visible; a discrete
  // GPU's host-visible device memory (the BAR) is small or slow to read, so
  // it goes through staging.
  const bool shared_memory_device = info.type == VK_PHYSICAL_DEVICE_TYPE_CPU ||
                                    info.type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
                                    info.type == VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU;
  bool mappable = false;
  const VkMemoryPropertyFlags wanted =
      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
  for (uint32_t i = 0; i < device->memory_.memoryTypeCount; ++i) {
    if ((device->memory_.memoryTypes[i].propertyFlags & wanted) == wanted) mappable = true;
  }
  device->buffers_host_visible_ = shared_memory_device && mappable && !EnvFlag("KILN_VULKAN_FORCE_STAGING");
  uint64_t largest_local_heap = 0;
  for (uint32_t i = 0; i < device->memory_.memoryHeapCount; ++i) {
    if ((device->memory_.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0)
      largest_local_heap = std::max<uint64_t>(largest_local_heap, device->memory_.memoryHeaps[i].size);
  }
  device->memory_cache_ =
      std::make_unique<MemoryCache>(std::min<uint64_t>(uint64_t{1} << 30, largest_local_heap / 4));
  return device;
}

StatusOr<std::shared_ptr<Device>> Device::Default() {
  static const StatusOr<std::shared_ptr<Device>>* opened =
      new StatusOr<std::shared_ptr<Device>>([]() -> StatusOr<std::shared_ptr<Device>> {
        KILN_ASSIGN_OR_RETURN(const Instance* instance, Instance::Get());
        KILN_ASSIGN_OR_RETURN(const PhysicalDeviceInfo* info, instance->ChooseDevice());
        return Open(*info);
      }());
  return *opened;
}

void Device::ReleaseIdleMemory() const {
  if (memory_cache_ == nullptr) return;
  for (const Allocation& allocation : memory_cache_->TakeAll()) {
    if (allocation.mapped != nullptr) api_.vkUnmapMemory(device_, allocation.memory);
    api_.vkDestroyBuffer(device_, allocation.buffer, nullptr);
    api_.vkFreeMemory(device_, allocation.memory, nullptr);
  }
}

std::optional<Device::CommandResources> Device::TakeCommandResources() const {
  const std::lock_guard<std::mutex> lock(command_resources_mutex_);
  if (idle_command_resources_.empty()) return std::nullopt;
  CommandResources resources = idle_command_resources_.back();
  idle_command_resources_.pop_back();
  return resources;
}

bool Device::KeepCommandResources(const CommandResources& resources) const {
  const std::lock_guard<std::mutex> lock(command_resources_mutex_);
  if (idle_command_resources_.size() >= kIdleCommandResources) return false;
  idle_command_resources_.push_back(resources);
  return true;
}

Device::~Device() {
  if (device_ == VK_NULL_HANDLE) return;
  if (api_.vkDeviceWaitIdle != nullptr) api_.vkDeviceWaitIdle(device_);
  ReleaseIdleMemory();
  for (const CommandResources& resources : idle_command_resources_) {
    api_.vkDestroyFence(device_, resources.fence, nullptr);
    api_.vkFreeCommandBuffers(device_, resources.pool, 1, &resources.commands);
    api_.vkDestroyCommandPool(device_, resources.pool, nullptr);
  }
  if (pipeline_cache_ != VK_NULL_HANDLE) api_.vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
  if (api_.vkDestroyDevice != nullptr) api_.vkDestroyDevice(device_, nullptr);
}

StatusOr<uint32_t> Device::MemoryTypeFor(uint32_t type_bits, bool staging) const {
  // Vulkan lists memory types best first, so the first that fits is taken.
  auto first = [&](VkMemoryPropertyFlags required) -> int {
    for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
      if ((type_bits & (1u << i)) != 0 && (memory_.memoryTypes[i].propertyFlags & required) == required) {
        return static_cast<int>(i);
      }
    }
    return -1;
  };
  const VkMemoryPropertyFlags host =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  int type = -1;
  if (staging) {
    // Cached memory makes downloads (host reads) fast.
    type = first(host | VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    if (type < 0) type = first(host);
    if (type < 0) type = first(VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
  } else if (buffers_host_visible_) {
    type = first(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | host);
    if (type < 0) type = first(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
  } else {
    type = first(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (type < 0) type = first(0);
  }
  if (type < 0) {
    return Internal("vulkan: the device ", info_.name, " has no ", staging ? "host-visible" : "device-local",
                    " memory type for a buffer (allowed types 0x", std::hex, type_bits, ")");
  }
  return static_cast<uint32_t>(type);
}

ShaderFeatures Device::shader_features() const {
  ShaderFeatures shader;
  shader.f16 = features_.f16;
  shader.f64 = features_.f64;
  shader.i8 = features_.i8;
  shader.i16 = features_.i16;
  shader.i64 = features_.i64;
  shader.storage8 = features_.storage8;
  shader.storage16 = features_.storage16;
  shader.preserves_nan_f16 = features_.preserves_nan_f16;
  shader.preserves_nan_f32 = features_.preserves_nan_f32;
  shader.preserves_nan_f64 = features_.preserves_nan_f64;
  shader.preserves_denormals_f16 = features_.preserves_denormals_f16;
  shader.preserves_denormals_f32 = features_.preserves_denormals_f32;
  shader.preserves_denormals_f64 = features_.preserves_denormals_f64;
  shader.subgroup_size = static_cast<int>(features_.subgroup_size);
  shader.subgroup_shuffle = features_.subgroup_shuffle && features_.subgroup_basic;
  shader.float32_atomic_add = features_.float32_atomic_add;
  shader.max_workgroup_size =
      static_cast<int>(std::min(features_.max_workgroup_size[0], features_.max_workgroup_invocations));
  shader.max_shared_memory_bytes = features_.max_shared_memory_bytes;
  shader.max_storage_buffers = static_cast<int>(
      std::min<uint32_t>(features_.max_storage_buffers_per_stage, std::numeric_limits<int>::max()));
  // lavapipe (Mesa's llvmpipe driver) silently ends a shader invocation
  // after 65535 loop iterations: a sum of 100000 ones gave 65535.
  if (info_.driver_name == "llvmpipe") shader.max_loop_iterations = 65535;
  shader.cpu_device = info_.type == VK_PHYSICAL_DEVICE_TYPE_CPU;
  return shader;
}

uint64_t Device::HeapBytes(uint32_t memory_type) const {
  return memory_.memoryHeaps[memory_.memoryTypes[memory_type].heapIndex].size;
}

bool Device::IsCoherent(uint32_t memory_type) const {
  return (memory_.memoryTypes[memory_type].propertyFlags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
}

Status Device::Submit(VkCommandBuffer commands, VkFence fence) const {
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &commands;
  std::lock_guard<std::mutex> lock(queue_mutex_);
  submissions_.fetch_add(1);
  return Check(api_.vkQueueSubmit(queue_, 1, &submit, fence), "vkQueueSubmit");
}

}  // namespace kiln::vulkan
