#include "backends/vulkan/vulkan_physical_device.h"

#include <algorithm>
#include <cstring>

#include "backends/vulkan/vulkan_loader.h"

namespace kiln::vulkan {

FeatureChain::FeatureChain(bool with_maintenance4, bool with_atomic_float) {
  features2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  vulkan11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  vulkan12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  maintenance4.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_FEATURES;
  atomic_float.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT;
  features2.pNext = &vulkan11;
  vulkan11.pNext = &vulkan12;
  void** tail = &vulkan12.pNext;
  if (with_maintenance4) {
    *tail = &maintenance4;
    tail = &maintenance4.pNext;
  }
  if (with_atomic_float) {
    *tail = &atomic_float;
    tail = &atomic_float.pNext;
  }
  *tail = nullptr;
}

bool PhysicalDeviceInfo::HasExtension(const char* extension) const {
  return std::find(extensions.begin(), extensions.end(), extension) != extensions.end();
}

void ReadFloatControls(const VkPhysicalDeviceFloatControlsProperties& properties, DeviceFeatures& features) {
  features.preserves_nan_f16 = properties.shaderSignedZeroInfNanPreserveFloat16;
  features.preserves_nan_f32 = properties.shaderSignedZeroInfNanPreserveFloat32;
  features.preserves_nan_f64 = properties.shaderSignedZeroInfNanPreserveFloat64;
  // A kernel declares DenormPreserve for the widths it uses, which may be
  // 32 bits alone: only where the device lets that width's denormal mode
  // differ from the others' (with 32_BIT_ONLY, 16 and 64 bits must share
  // theirs, so neither is declared).
  const VkShaderFloatControlsIndependence independence = properties.denormBehaviorIndependence;
  const bool independent_32 = independence == VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_32_BIT_ONLY ||
                              independence == VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_ALL;
  const bool independent_all = independence == VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_ALL;
  features.preserves_denormals_f16 = properties.shaderDenormPreserveFloat16 && independent_all;
  features.preserves_denormals_f32 = properties.shaderDenormPreserveFloat32 && independent_32;
  features.preserves_denormals_f64 = properties.shaderDenormPreserveFloat64 && independent_all;
}

const char* DeviceTypeName(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

std::string PhysicalDeviceInfo::ToString() const {
  std::string text = name + ", " + DeviceTypeName(type) + ", Vulkan " + VersionString(api_version);
  if (!driver_name.empty()) text += ", driver " + driver_name;
  if (!driver_info.empty()) text += " (" + driver_info + ")";
  return text;
}

StatusOr<PhysicalDeviceInfo> DescribePhysicalDevice(const InstanceFunctions& api, VkPhysicalDevice device,
                                                    uint32_t instance_api_version) {
  PhysicalDeviceInfo info;
  info.handle = device;
  VkPhysicalDeviceProperties basic{};
  api.vkGetPhysicalDeviceProperties(device, &basic);
  info.name = basic.deviceName;
  info.type = basic.deviceType;
  info.api_version = basic.apiVersion;
  info.vendor_id = basic.vendorID;
  info.device_id = basic.deviceID;
  info.effective_api_version = std::min(basic.apiVersion, instance_api_version);
  if (info.effective_api_version < VK_API_VERSION_1_2) {
    return FailedPrecondition("vulkan: the device ", info.name, " supports Vulkan ",
                              VersionString(basic.apiVersion), "; Kiln needs Vulkan 1.2");
  }

  uint32_t extension_count = 0;
  KILN_RETURN_IF_ERROR(
      Check(api.vkEnumerateDeviceExtensionProperties(device, nullptr, &extension_count, nullptr),
            "vkEnumerateDeviceExtensionProperties"));
  std::vector<VkExtensionProperties> extensions(extension_count);
  KILN_RETURN_IF_ERROR(
      Check(api.vkEnumerateDeviceExtensionProperties(device, nullptr, &extension_count, extensions.data()),
            "vkEnumerateDeviceExtensionProperties"));
  extensions.resize(extension_count);
  for (const VkExtensionProperties& extension : extensions)
    info.extensions.push_back(extension.extensionName);
  info.has_maintenance4_extension = info.HasExtension(VK_KHR_MAINTENANCE_4_EXTENSION_NAME);
  info.has_atomic_float_extension = info.HasExtension(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  info.has_push_descriptor_extension = info.HasExtension(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  const bool knows_maintenance4 =
      info.effective_api_version >= VK_API_VERSION_1_3 || info.has_maintenance4_extension;

  // Properties: subgroups, driver, UUID, allocation limit, float controls,
  // push descriptors.
  VkPhysicalDeviceProperties2 properties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, nullptr, {}};
  VkPhysicalDeviceSubgroupProperties subgroup{};
  subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  VkPhysicalDeviceDriverProperties driver{};
  driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  VkPhysicalDeviceIDProperties id{};
  id.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
  VkPhysicalDeviceMaintenance3Properties maintenance3{};
  maintenance3.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
  VkPhysicalDeviceFloatControlsProperties float_controls{};
  float_controls.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES;
  VkPhysicalDevicePushDescriptorPropertiesKHR push{};
  push.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PUSH_DESCRIPTOR_PROPERTIES_KHR;
  properties.pNext = &subgroup;
  subgroup.pNext = &driver;
  driver.pNext = &id;
  id.pNext = &maintenance3;
  maintenance3.pNext = &float_controls;
  if (info.has_push_descriptor_extension) float_controls.pNext = &push;
  api.vkGetPhysicalDeviceProperties2(device, &properties);
  info.driver_name = driver.driverName;
  info.driver_info = driver.driverInfo;
  std::memcpy(info.uuid, id.deviceUUID, VK_UUID_SIZE);
  info.driver_version = properties.properties.driverVersion;
  std::memcpy(info.pipeline_cache_uuid, properties.properties.pipelineCacheUUID, VK_UUID_SIZE);

  FeatureChain chain(knows_maintenance4, info.has_atomic_float_extension);
  api.vkGetPhysicalDeviceFeatures2(device, &chain.features2);
  const VkPhysicalDeviceFeatures& core = chain.features2.features;

  DeviceFeatures& f = info.features;
  f.f16 = chain.vulkan12.shaderFloat16;
  f.f64 = core.shaderFloat64;
  f.i8 = chain.vulkan12.shaderInt8;
  f.i16 = core.shaderInt16;
  f.i64 = core.shaderInt64;
  f.storage8 = chain.vulkan12.storageBuffer8BitAccess;
  f.storage16 = chain.vulkan11.storageBuffer16BitAccess;
  f.int64_atomics = chain.vulkan12.shaderBufferInt64Atomics;
  f.float32_atomic_add = info.has_atomic_float_extension && chain.atomic_float.shaderBufferFloat32AtomicAdd;
  f.float64_atomic_add = info.has_atomic_float_extension && chain.atomic_float.shaderBufferFloat64AtomicAdd;
  // Subgroup operations count only when compute shaders may use them.
  const bool compute_subgroups = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
  auto op = [&](VkSubgroupFeatureFlagBits bit) {
    return compute_subgroups && (subgroup.supportedOperations & bit) != 0;
  };
  f.subgroup_basic = op(VK_SUBGROUP_FEATURE_BASIC_BIT);
  f.subgroup_vote = op(VK_SUBGROUP_FEATURE_VOTE_BIT);
  f.subgroup_arithmetic = op(VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
  f.subgroup_ballot = op(VK_SUBGROUP_FEATURE_BALLOT_BIT);
  f.subgroup_shuffle = op(VK_SUBGROUP_FEATURE_SHUFFLE_BIT);
  f.subgroup_shuffle_relative = op(VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT);
  f.subgroup_clustered = op(VK_SUBGROUP_FEATURE_CLUSTERED_BIT);
  f.subgroup_quad = op(VK_SUBGROUP_FEATURE_QUAD_BIT);
  f.subgroup_size = subgroup.subgroupSize;
  ReadFloatControls(float_controls, f);
  f.timeline_semaphore = chain.vulkan12.timelineSemaphore;
  f.maintenance4 = knows_maintenance4 && chain.maintenance4.maintenance4;
  f.push_descriptors = info.has_push_descriptor_extension;

  const VkPhysicalDeviceLimits& limits = properties.properties.limits;
  for (int i = 0; i < 3; ++i) {
    f.max_workgroup_size[i] = limits.maxComputeWorkGroupSize[i];
    f.max_workgroup_count[i] = limits.maxComputeWorkGroupCount[i];
  }
  f.max_workgroup_invocations = limits.maxComputeWorkGroupInvocations;
  f.max_shared_memory_bytes = limits.maxComputeSharedMemorySize;
  f.max_push_constant_bytes = limits.maxPushConstantsSize;
  f.max_storage_buffers_per_stage = limits.maxPerStageDescriptorStorageBuffers;
  if (info.has_push_descriptor_extension) {
    // Kiln binds every buffer of a dispatch in one push-descriptor set.
    f.max_storage_buffers_per_stage = std::min(f.max_storage_buffers_per_stage, push.maxPushDescriptors);
  }
  f.max_storage_buffer_range = limits.maxStorageBufferRange;
  f.max_allocation_bytes = maintenance3.maxMemoryAllocationSize;
  f.min_storage_buffer_offset_alignment = limits.minStorageBufferOffsetAlignment;
  return info;
}

}  // namespace kiln::vulkan
