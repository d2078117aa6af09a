// The Vulkan loader, opened with dlopen("libvulkan.so.1") on first use so
// that libkiln.so builds and loads on machines without Vulkan. The loader's
// global entry points (vulkan_api.h) are resolved once; a missing library or
// symbol makes Vulkan UNAVAILABLE with a message naming it, and nothing else
// in Kiln is affected.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "backends/vulkan/vulkan_api.h"
#include "core/status.h"

namespace kiln::vulkan {

class Loader {
 public:
  // The process-wide loader, opened on the first call; the same error on
  // every call when that failed. Thread-safe. The library is
  // `KILN_VULKAN_LOADER` when that is set (tests point it at a missing
  // file), else libvulkan.so.1 from the dynamic linker's search path.
  static StatusOr<const Loader*> Get();

  const GlobalFunctions& api() const { return api_; }
  PFN_vkGetInstanceProcAddr get_instance_proc_addr() const { return get_instance_proc_addr_; }
  const std::string& path() const { return path_; }
  // The highest instance API version the loader supports (VK_MAKE_API_VERSION).
  uint32_t version() const { return version_; }

 private:
  Loader() = default;
  static StatusOr<const Loader*> Load();

  GlobalFunctions api_;
  PFN_vkGetInstanceProcAddr get_instance_proc_addr_ = nullptr;
  std::string path_;
  uint32_t version_ = 0;
};

// The shared libraries loaded in the process now, by path. With
// PinLibrariesLoadedSince, it keeps the libraries Vulkan loads (drivers,
// layers) mapped until the process ends.
std::vector<std::string> LoadedLibraries();
// Marks every library loaded now but absent from `before` RTLD_NODELETE.
// The Vulkan loader unloads drivers and layers when it is done with them
// (at vkDestroyInstance, or in its own destructor at exit); what they
// allocated is then held only by unmapped memory, which LeakSanitizer
// reports as leaks. Pinned, their globals stay mapped and reachable.
void PinLibrariesLoadedSince(const std::vector<std::string>& before);

// The name of a VkResult, e.g. "VK_ERROR_OUT_OF_DEVICE_MEMORY".
const char* ResultName(VkResult result);

// OK for VK_SUCCESS (and the other non-negative codes), else an error whose
// message names `what` (the call that failed) and the result. Out-of-memory
// codes become RESOURCE_EXHAUSTED, a lost device or missing driver
// UNAVAILABLE, everything else INTERNAL.
Status Check(VkResult result, std::string_view what);

// "1.3.230" for a VK_MAKE_API_VERSION value.
std::string VersionString(uint32_t version);

}  // namespace kiln::vulkan
