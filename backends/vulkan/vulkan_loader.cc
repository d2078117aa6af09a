#include "backends/vulkan/vulkan_loader.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstdlib>

namespace kiln::vulkan {

StatusOr<const Loader*> Loader::Load() {
  const char* override_path = std::getenv("KILN_VULKAN_LOADER");
  const std::string path = override_path != nullptr && *override_path != 0 ? override_path : "libvulkan.so.1";
  // RTLD_NODELETE: the loader and the drivers it opens keep process-wide
  // state (and the instance lives as long as the process); it is never
  // unloaded.
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (library == nullptr) {
    const char* reason = dlerror();
    return Unavailable("vulkan: no Vulkan loader (", path,
                       "): ", reason != nullptr ? reason : "unknown reason",
                       "; install a Vulkan driver (e.g. mesa-vulkan-drivers and libvulkan1), or use the cpu "
                       "backend");
  }
  auto* loader = new Loader();
  loader->path_ = path;
  loader->get_instance_proc_addr_ =
      reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(library, "vkGetInstanceProcAddr"));
  if (loader->get_instance_proc_addr_ == nullptr) {
    delete loader;
    return Unavailable("vulkan: the library ", path,
                       " has no vkGetInstanceProcAddr; it is not a Vulkan loader, or use the cpu backend");
  }
#define KILN_VULKAN_RESOLVE_GLOBAL(name)                                                             \
  loader->api_.name = reinterpret_cast<PFN_##name>(loader->get_instance_proc_addr_(nullptr, #name)); \
  if (loader->api_.name == nullptr) {                                                                \
    delete loader;                                                                                   \
    return Unavailable("vulkan: the Vulkan loader ", path, " has no ", #name,                        \
                       "; it is older than Vulkan 1.1 (update libvulkan1), or use the cpu backend"); \
  }
  KILN_VULKAN_GLOBAL_FUNCTIONS(KILN_VULKAN_RESOLVE_GLOBAL)
#undef KILN_VULKAN_RESOLVE_GLOBAL
  if (loader->api_.vkEnumerateInstanceVersion(&loader->version_) != VK_SUCCESS) {
    loader->version_ = VK_API_VERSION_1_0;
  }
  return static_cast<const Loader*>(loader);
}

StatusOr<const Loader*> Loader::Get() {
  // Loaded once; intentionally never freed (the loader is process-wide).
  static const StatusOr<const Loader*>* loaded = new StatusOr<const Loader*>(Load());
  return *loaded;
}

std::vector<std::string> LoadedLibraries() {
  std::vector<std::string> paths;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != 0) {
          static_cast<std::vector<std::string>*>(data)->push_back(info->dlpi_name);
        }
        return 0;
      },
      &paths);
  return paths;
}

void PinLibrariesLoadedSince(const std::vector<std::string>& before) {
  for (const std::string& path : LoadedLibraries()) {
    if (std::find(before.begin(), before.end(), path) != before.end()) continue;
    // RTLD_NOLOAD: only a library already loaded; the added reference and
    // the NODELETE flag are never released.
    dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  }
}

const char* ResultName(VkResult result) {
  switch (result) {
#define KILN_VULKAN_RESULT(name) \
  case name: return #name;
    KILN_VULKAN_RESULT(VK_SUCCESS)
    KILN_VULKAN_RESULT(VK_NOT_READY)
    KILN_VULKAN_RESULT(VK_TIMEOUT)
    KILN_VULKAN_RESULT(VK_EVENT_SET)
    KILN_VULKAN_RESULT(VK_EVENT_RESET)
    KILN_VULKAN_RESULT(VK_INCOMPLETE)
    KILN_VULKAN_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    KILN_VULKAN_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    KILN_VULKAN_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    KILN_VULKAN_RESULT(VK_ERROR_DEVICE_LOST)
    KILN_VULKAN_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    KILN_VULKAN_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    KILN_VULKAN_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    KILN_VULKAN_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    KILN_VULKAN_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    KILN_VULKAN_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    KILN_VULKAN_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    KILN_VULKAN_RESULT(VK_ERROR_FRAGMENTED_POOL)
    KILN_VULKAN_RESULT(VK_ERROR_UNKNOWN)
    KILN_VULKAN_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    KILN_VULKAN_RESULT(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    KILN_VULKAN_RESULT(VK_ERROR_FRAGMENTATION)
    KILN_VULKAN_RESULT(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    KILN_VULKAN_RESULT(VK_PIPELINE_COMPILE_REQUIRED)
#undef KILN_VULKAN_RESULT
    default: return "an unknown VkResult";
  }
}

Status Check(VkResult result, std::string_view what) {
  if (result >= 0) return OkStatus();
  std::string message = "vulkan: " + std::string(what) + " failed: " + ResultName(result) + " (" +
                        std::to_string(static_cast<int>(result)) + ")";
  switch (result) {
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_FRAGMENTED_POOL:
    case VK_ERROR_FRAGMENTATION:
    case VK_ERROR_TOO_MANY_OBJECTS: return ResourceExhausted(message);
    case VK_ERROR_DEVICE_LOST:
    case VK_ERROR_INCOMPATIBLE_DRIVER:
    case VK_ERROR_INITIALIZATION_FAILED: return Unavailable(message);
    default: return Internal(message);
  }
}

std::string VersionString(uint32_t version) {
  return std::to_string(VK_API_VERSION_MAJOR(version)) + "." + std::to_string(VK_API_VERSION_MINOR(version)) +
         "." + std::to_string(VK_API_VERSION_PATCH(version));
}

}  // namespace kiln::vulkan
