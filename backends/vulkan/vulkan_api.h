// The slice of the Vulkan API Kiln calls. Only the headers are used at build
// time (VK_NO_PROTOTYPES: nothing links against libvulkan); every function
// is resolved at run time through vkGetInstanceProcAddr/vkGetDeviceProcAddr
// (vulkan_loader.h), so libkiln loads on a machine without Vulkan. Each list
// is an X-macro over the function's name; the tables below give each one a
// field of its PFN_ type under the same name.
#pragma once

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <vulkan/vulkan_core.h>

namespace kiln::vulkan {

// Resolved with vkGetInstanceProcAddr(nullptr, ...): usable before an instance exists.
#define KILN_VULKAN_GLOBAL_FUNCTIONS(X) \
  X(vkCreateInstance)                   \
  X(vkEnumerateInstanceVersion)         \
  X(vkEnumerateInstanceLayerProperties) \
  X(vkEnumerateInstanceExtensionProperties)

// Resolved with vkGetInstanceProcAddr(instance, ...); all are core 1.1.
#define KILN_VULKAN_INSTANCE_FUNCTIONS(X)     \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceProperties2)           \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkEnumerateDeviceExtensionProperties)     \
  X(vkCreateDevice)                           \
  X(vkGetDeviceProcAddr)

// Instance functions of extensions: null when the extension is not enabled.
#define KILN_VULKAN_OPTIONAL_INSTANCE_FUNCTIONS(X) \
  X(vkCreateDebugUtilsMessengerEXT)                \
  X(vkDestroyDebugUtilsMessengerEXT)

// Resolved with vkGetDeviceProcAddr(device, ...); all are core 1.0.
#define KILN_VULKAN_DEVICE_FUNCTIONS(X) \
  X(vkDestroyDevice)                    \
  X(vkGetDeviceQueue)                   \
  X(vkDeviceWaitIdle)                   \
  X(vkQueueSubmit)                      \
  X(vkCreateBuffer)                     \
  X(vkDestroyBuffer)                    \
  X(vkGetBufferMemoryRequirements)      \
  X(vkAllocateMemory)                   \
  X(vkFreeMemory)                       \
  X(vkBindBufferMemory)                 \
  X(vkMapMemory)                        \
  X(vkUnmapMemory)                      \
  X(vkFlushMappedMemoryRanges)          \
  X(vkInvalidateMappedMemoryRanges)     \
  X(vkCreateShaderModule)               \
  X(vkDestroyShaderModule)              \
  X(vkCreateDescriptorSetLayout)        \
  X(vkDestroyDescriptorSetLayout)       \
  X(vkCreatePipelineLayout)             \
  X(vkDestroyPipelineLayout)            \
  X(vkCreatePipelineCache)              \
  X(vkDestroyPipelineCache)             \
  X(vkGetPipelineCacheData)             \
  X(vkCreateComputePipelines)           \
  X(vkDestroyPipeline)                  \
  X(vkCreateDescriptorPool)             \
  X(vkDestroyDescriptorPool)            \
  X(vkAllocateDescriptorSets)           \
  X(vkUpdateDescriptorSets)             \
  X(vkCreateCommandPool)                \
  X(vkDestroyCommandPool)               \
  X(vkResetCommandPool)                 \
  X(vkAllocateCommandBuffers)           \
  X(vkFreeCommandBuffers)               \
  X(vkBeginCommandBuffer)               \
  X(vkEndCommandBuffer)                 \
  X(vkCmdBindPipeline)                  \
  X(vkCmdBindDescriptorSets)            \
  X(vkCmdPushConstants)                 \
  X(vkCmdDispatch)                      \
  X(vkCmdPipelineBarrier)               \
  X(vkCmdCopyBuffer)                    \
  X(vkCmdFillBuffer)                    \
  X(vkCreateFence)                      \
  X(vkDestroyFence)                     \
  X(vkResetFences)                      \
  X(vkWaitForFences)

// Device functions of extensions: null when the extension is not enabled.
#define KILN_VULKAN_OPTIONAL_DEVICE_FUNCTIONS(X) X(vkCmdPushDescriptorSetKHR)

#define KILN_VULKAN_FIELD(name) PFN_##name name = nullptr;

struct GlobalFunctions {
  KILN_VULKAN_GLOBAL_FUNCTIONS(KILN_VULKAN_FIELD)
};

struct InstanceFunctions {
  KILN_VULKAN_INSTANCE_FUNCTIONS(KILN_VULKAN_FIELD)
  KILN_VULKAN_OPTIONAL_INSTANCE_FUNCTIONS(KILN_VULKAN_FIELD)
};

struct DeviceFunctions {
  KILN_VULKAN_DEVICE_FUNCTIONS(KILN_VULKAN_FIELD)
  KILN_VULKAN_OPTIONAL_DEVICE_FUNCTIONS(KILN_VULKAN_FIELD)
};

#undef KILN_VULKAN_FIELD

}  // namespace kiln::vulkan
