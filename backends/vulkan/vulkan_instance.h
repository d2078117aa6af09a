// The process-wide Vulkan instance and the devices it sees. It is created on
// first use and never destroyed: destroying it lets the loader unload the
// driver (lavapipe), which LeakSanitizer then reports as a leak from an
// unknown module, and a process needs one instance for its whole life anyway.
//
// KILN_VULKAN_VALIDATION=1 enables VK_LAYER_KHRONOS_validation (when it is
// installed) with synchronization validation, and a messenger that records
// every warning and error the layer reports, so tests can assert there were
// none. KILN_VULKAN_DEVICE picks the device (see ChooseDevice).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "backends/vulkan/vulkan_api.h"
#include "backends/vulkan/vulkan_physical_device.h"
#include "core/status.h"

namespace kiln::vulkan {

class Instance {
 public:
  // The instance, created on the first call; the same error on every call
  // when that failed (UNAVAILABLE when there is no loader, no driver or no
  // usable device, with the reason). Thread-safe.
  static StatusOr<const Instance*> Get();

  const InstanceFunctions& api() const { return api_; }
  VkInstance handle() const { return instance_; }
  uint32_t api_version() const { return api_version_; }
  bool validation_enabled() const { return validation_; }

  // The usable devices, best first: discrete GPUs, then integrated, virtual
  // and CPU devices (lavapipe is one, and it is allowed), in the loader's
  // order within a type; a device reported twice (same deviceUUID, e.g. by
  // two ICDs) is listed once. Never empty.
  const std::vector<PhysicalDeviceInfo>& devices() const { return devices_; }

  // The device to use: KILN_VULKAN_DEVICE when set (an index in devices(),
  // or a case-insensitive substring of a name), else devices()[0].
  // INVALID_ARGUMENT, listing the devices, when the variable names none.
  StatusOr<const PhysicalDeviceInfo*> ChooseDevice() const;

  // The warnings and errors the validation layer reported since the last
  // call, each as "SEVERITY [message id] text"; the record is cleared.
  // Empty when validation is off. Thread-safe.
  static std::vector<std::string> TakeValidationMessages();

 private:
  Instance() = default;
  static StatusOr<const Instance*> Create();

  InstanceFunctions api_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  uint32_t api_version_ = 0;
  bool validation_ = false;
  std::vector<PhysicalDeviceInfo> devices_;
};

// True when the environment variable `name` is set and neither empty nor
// "0": the backend's KILN_VULKAN_* switches.
bool EnvFlag(const char* name);

}  // namespace kiln::vulkan
