// What Kiln knows about one Vulkan physical device before opening it: its
// identity (name, type, driver, API version, UUID) and its optional features
// and limits, read with vkGetPhysicalDeviceFeatures2/Properties2.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/vulkan/vulkan_api.h"
#include "backends/vulkan/vulkan_device_features.h"
#include "core/status.h"

namespace kiln::vulkan {

// The feature structs Kiln reads and enables, chained behind `features2`.
// It points into itself: not copyable or movable.
struct FeatureChain {
  VkPhysicalDeviceFeatures2 features2{};
  VkPhysicalDeviceVulkan11Features vulkan11{};
  VkPhysicalDeviceVulkan12Features vulkan12{};
  VkPhysicalDeviceMaintenance4Features maintenance4{};
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomic_float{};

  // Sets the sTypes and links vulkan11 and vulkan12 (core in 1.2, which Kiln
  // requires), and maintenance4 / atomic_float only when the device knows
  // them (chaining a struct the device does not know is invalid usage).
  FeatureChain(bool with_maintenance4, bool with_atomic_float);
  FeatureChain(const FeatureChain&) = delete;
  FeatureChain& operator=(const FeatureChain&) = delete;
};

struct PhysicalDeviceInfo {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  std::string name;  // e.g. "llvmpipe (LLVM 15.0.6, 256 bits)"
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  std::string driver_name;   // e.g. "llvmpipe"
  std::string driver_info;   // e.g. "Mesa 22.3.6 (LLVM 15.0.6)"
  uint32_t api_version = 0;  // what the device supports
  // What Kiln may use: the lower of the instance's and the device's versions.
  uint32_t effective_api_version = 0;
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  uint8_t uuid[VK_UUID_SIZE] = {};
  // What a driver's pipeline-cache data must match (the on-disk cache,
  // kernel_cache.h, checks both before handing data to the driver).
  uint32_t driver_version = 0;
  uint8_t pipeline_cache_uuid[VK_UUID_SIZE] = {};
  std::vector<std::string> extensions;
  // The optional features the device has (all of them are enabled when Kiln
  // opens it) and its limits.
  DeviceFeatures features;
  // Extensions Kiln enables when the device has them.
  bool has_maintenance4_extension = false;  // needed below API 1.3 only
  bool has_atomic_float_extension = false;
  bool has_push_descriptor_extension = false;

  bool HasExtension(const char* name) const;
  // One line: "llvmpipe (LLVM 15.0.6, 256 bits), cpu, Vulkan 1.3.230, driver llvmpipe (Mesa ...)".
  std::string ToString() const;
};

// Sets the float-control flags of `features` (NaN and denormal
// preservation per width) from the device's properties.
void ReadFloatControls(const VkPhysicalDeviceFloatControlsProperties& properties, DeviceFeatures& features);

// "discrete", "integrated", "virtual", "cpu" or "other".
const char* DeviceTypeName(VkPhysicalDeviceType type);

// Reads everything PhysicalDeviceInfo holds. Devices below Vulkan 1.2 are
// refused (FAILED_PRECONDITION naming the device and its version).
StatusOr<PhysicalDeviceInfo> DescribePhysicalDevice(const InstanceFunctions& api, VkPhysicalDevice device,
                                                    uint32_t instance_api_version);

}  // namespace kiln::vulkan
