#include "backends/vulkan/vulkan_instance.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "backends/vulkan/vulkan_loader.h"

namespace kiln::vulkan {
namespace {

// An instance created and then refused (no usable device) is kept too,
// reachable from here, for the reason the header gives.
Instance* kept_instance = nullptr;

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

std::mutex& MessagesMutex() {
  static auto* mutex = new std::mutex();
  return *mutex;
}
std::vector<std::string>& Messages() {
  static auto* messages = new std::vector<std::string>();
  return *messages;
}

VKAPI_ATTR VkBool32 VKAPI_CALL OnValidationMessage(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT /*types*/,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                   void* /*user*/) {
  std::string text = severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "ERROR" : "WARNING";
  if (data != nullptr && data->pMessageIdName != nullptr)
    text += std::string(" [") + data->pMessageIdName + "]";
  if (data != nullptr && data->pMessage != nullptr) text += std::string(" ") + data->pMessage;
  // Shown at once too: a test that fails on the count should say why.
  std::fprintf(stderr, "kiln vulkan validation: %s\n", text.c_str());
  std::lock_guard<std::mutex> lock(MessagesMutex());
  Messages().push_back(std::move(text));
  return VK_FALSE;  // the call that triggered the message goes on
}

int TypeRank(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
  }
}

bool HasLayer(const GlobalFunctions& api, const char* name) {
  uint32_t count = 0;
  if (api.vkEnumerateInstanceLayerProperties(&count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> layers(count);
  if (api.vkEnumerateInstanceLayerProperties(&count, layers.data()) < 0) return false;
  layers.resize(count);
  return std::any_of(layers.begin(), layers.end(),
                     [&](const VkLayerProperties& layer) { return std::strcmp(layer.layerName, name) == 0; });
}

bool HasInstanceExtension(const GlobalFunctions& api, const char* layer, const char* name) {
  uint32_t count = 0;
  if (api.vkEnumerateInstanceExtensionProperties(layer, &count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> extensions(count);
  if (api.vkEnumerateInstanceExtensionProperties(layer, &count, extensions.data()) < 0) return false;
  extensions.resize(count);
  return std::any_of(extensions.begin(), extensions.end(), [&](const VkExtensionProperties& extension) {
    return std::strcmp(extension.extensionName, name) == 0;
  });
}

}  // namespace

StatusOr<const Instance*> Instance::Create() {
  KILN_ASSIGN_OR_RETURN(const Loader* loader, Loader::Get());
  const GlobalFunctions& global = loader->api();
  if (loader->version() < VK_API_VERSION_1_2) {
    return Unavailable("vulkan: the Vulkan loader ", loader->path(), " supports Vulkan ",
                       VersionString(loader->version()),
                       "; Kiln needs 1.2 (update libvulkan1), or use the cpu backend");
  }
  auto* instance = new Instance();
  kept_instance = instance;
  // 1.3 where the loader has it, so 1.3 devices expose maintenance4 as core;
  // shaders still target SPIR-V 1.5 (Vulkan 1.2), which every device takes.
  instance->api_version_ = std::min(loader->version(), static_cast<uint32_t>(VK_API_VERSION_1_3));

  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  VkValidationFeatureEnableEXT enabled_checks[] = {
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT validation_features{};
  validation_features.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT;
  validation_features.enabledValidationFeatureCount = 1;
  validation_features.pEnabledValidationFeatures = enabled_checks;
  VkDebugUtilsMessengerCreateInfoEXT messenger_info{};
  messenger_info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
  messenger_info.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger_info.pfnUserCallback = OnValidationMessage;
  const void* next = nullptr;
  if (EnvFlag("KILN_VULKAN_VALIDATION")) {
    if (!HasLayer(global, kValidationLayer)) {
      std::fprintf(stderr,
                   "kiln vulkan: KILN_VULKAN_VALIDATION is set but %s is not installed "
                   "(vulkan-validationlayers); running without validation\n",
                   kValidationLayer);
    } else if (!HasInstanceExtension(global, kValidationLayer, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) &&
               !HasInstanceExtension(global, nullptr, VK_EXT_DEBUG_UTILS_EXTENSION_NAME)) {
      std::fprintf(stderr, "kiln vulkan: no %s; running without validation\n",
                   VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    } else {
      instance->validation_ = true;
      layers.push_back(kValidationLayer);
      extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
      // The messenger in the chain also hears vkCreateInstance itself.
      next = &messenger_info;
      if (HasInstanceExtension(global, kValidationLayer, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME)) {
        extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
        validation_features.pNext = next;
        next = &validation_features;
      }
    }
  }

  VkApplicationInfo application{};
  application.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  application.pApplicationName = "kiln";
  application.pEngineName = "kiln";
  application.apiVersion = instance->api_version_;
  VkInstanceCreateInfo create{};
  create.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  create.pNext = next;
  create.pApplicationInfo = &application;
  create.enabledLayerCount = static_cast<uint32_t>(layers.size());
  create.ppEnabledLayerNames = layers.data();
  create.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  create.ppEnabledExtensionNames = extensions.data();
  const std::vector<std::string> libraries_before = LoadedLibraries();
  const VkResult created = global.vkCreateInstance(&create, nullptr, &instance->instance_);
  if (created != VK_SUCCESS) {
    delete instance;
    if (created == VK_ERROR_INCOMPATIBLE_DRIVER) {
      return Unavailable(
          "vulkan: no Vulkan driver (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER); install one "
          "(e.g. mesa-vulkan-drivers), check VK_DRIVER_FILES, or use the cpu backend");
    }
    return Unavailable(Check(created, "vkCreateInstance").message(), "; or use the cpu backend");
  }

  PFN_vkGetInstanceProcAddr resolve = loader->get_instance_proc_addr();
  VkInstance handle = instance->instance_;
#define KILN_VULKAN_RESOLVE_INSTANCE(name)                                              \
  instance->api_.name = reinterpret_cast<PFN_##name>(resolve(handle, #name));           \
  if (instance->api_.name == nullptr) {                                                 \
    return Unavailable("vulkan: the Vulkan loader ", loader->path(), " has no ", #name, \
                       "; update libvulkan1");                                          \
  }
  KILN_VULKAN_INSTANCE_FUNCTIONS(KILN_VULKAN_RESOLVE_INSTANCE)
#undef KILN_VULKAN_RESOLVE_INSTANCE
#define KILN_VULKAN_RESOLVE_OPTIONAL(name) \
  instance->api_.name = reinterpret_cast<PFN_##name>(resolve(handle, #name));
  KILN_VULKAN_OPTIONAL_INSTANCE_FUNCTIONS(KILN_VULKAN_RESOLVE_OPTIONAL)
#undef KILN_VULKAN_RESOLVE_OPTIONAL
  // From here on the instance is kept even on failure (see the header):
  // the error is cached by Get() and the handle stays reachable.
  if (instance->validation_ && instance->api_.vkCreateDebugUtilsMessengerEXT != nullptr) {
    KILN_RETURN_IF_ERROR(Check(instance->api_.vkCreateDebugUtilsMessengerEXT(handle, &messenger_info, nullptr,
                                                                             &instance->messenger_),
                               "vkCreateDebugUtilsMessengerEXT"));
  }

  uint32_t count = 0;
  KILN_RETURN_IF_ERROR(Check(instance->api_.vkEnumeratePhysicalDevices(handle, &count, nullptr),
                             "vkEnumeratePhysicalDevices"));
  std::vector<VkPhysicalDevice> physical(count);
  KILN_RETURN_IF_ERROR(Check(instance->api_.vkEnumeratePhysicalDevices(handle, &count, physical.data()),
                             "vkEnumeratePhysicalDevices"));
  physical.resize(count);
  // The drivers and layers are loaded by now (see PinLibrariesLoadedSince).
  PinLibrariesLoadedSince(libraries_before);
  std::string refused;
  for (VkPhysicalDevice device : physical) {
    StatusOr<PhysicalDeviceInfo> info =
        DescribePhysicalDevice(instance->api_, device, instance->api_version_);
    if (!info.ok()) {
      refused += "; " + info.status().message();
      continue;
    }
    const bool duplicate = std::any_of(instance->devices_.begin(), instance->devices_.end(),
                                       [&](const PhysicalDeviceInfo& seen) {
                                         return std::memcmp(seen.uuid, info->uuid, VK_UUID_SIZE) == 0;
                                       });
    if (!duplicate) instance->devices_.push_back(std::move(info).value());
  }
  // Best type first, the loader's order kept within a type (by hand: clang
  // 19 flags std::stable_sort's use of libstdc++ 12's deprecated
  // get_temporary_buffer).
  std::vector<PhysicalDeviceInfo> ordered;
  for (int rank = 0; rank <= 4; ++rank) {
    for (PhysicalDeviceInfo& device : instance->devices_) {
      if (TypeRank(device.type) == rank) ordered.push_back(std::move(device));
    }
  }
  instance->devices_ = std::move(ordered);
  if (instance->devices_.empty()) {
    return Unavailable("vulkan: the Vulkan driver",
                       count == 0 ? " reports no device" : "s report no usable device", refused,
                       "; install a Vulkan driver (e.g. mesa-vulkan-drivers), or use the cpu backend");
  }
  return static_cast<const Instance*>(instance);
}

StatusOr<const Instance*> Instance::Get() {
  // Created once; intentionally never destroyed (see the header).
  static const StatusOr<const Instance*>* created = new StatusOr<const Instance*>(Create());
  return *created;
}

StatusOr<const PhysicalDeviceInfo*> Instance::ChooseDevice() const {
  const char* wanted = std::getenv("KILN_VULKAN_DEVICE");
  if (wanted == nullptr || *wanted == 0) return &devices_.front();
  const std::string text = wanted;
  if (std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) {
    const unsigned long index = std::strtoul(text.c_str(), nullptr, 10);
    if (text.size() < 10 && index < devices_.size()) return &devices_[index];
  } else {
    auto lower = [](std::string s) {
      for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return s;
    };
    for (const PhysicalDeviceInfo& device : devices_) {
      if (lower(device.name).find(lower(text)) != std::string::npos) return &device;
    }
  }
  std::string listing;
  for (size_t i = 0; i < devices_.size(); ++i) {
    listing += (i == 0 ? "" : "; ") + std::to_string(i) + ": " + devices_[i].ToString();
  }
  return InvalidArgument("vulkan: KILN_VULKAN_DEVICE=\"", text,
                         "\" is neither the index nor part of the name of a device; the devices are ",
                         listing);
}

std::vector<std::string> Instance::TakeValidationMessages() {
  std::lock_guard<std::mutex> lock(MessagesMutex());
  std::vector<std::string> taken;
  taken.swap(Messages());
  return taken;
}

bool EnvFlag(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != 0 && std::strcmp(value, "0") != 0;
}

}  // namespace kiln::vulkan
