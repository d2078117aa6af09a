#include "backends/vulkan/kernel_cache.h"

#include <cstdlib>
#include <cstring>

#include "backends/vulkan/shader_compiler.h"
#include "backends/vulkan/vulkan_loader.h"

namespace kiln::vulkan {
namespace {

namespace fs = std::filesystem;

std::string HexBytes(const uint8_t* bytes, size_t count) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  for (size_t i = 0; i < count; ++i) {
    text += kDigits[bytes[i] >> 4];
    text += kDigits[bytes[i] & 15];
  }
  return text;
}

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

// VkPipelineCacheHeaderVersionOne, as the specification lays it out: the
// header every driver's data starts with.
struct PipelineCacheHeader {
  uint32_t header_size;
  uint32_t header_version;
  uint32_t vendor_id;
  uint32_t device_id;
  uint8_t pipeline_cache_uuid[VK_UUID_SIZE];
};
static_assert(sizeof(PipelineCacheHeader) == 32);

}  // namespace

fs::path KernelCacheDirectory(const std::string& option) {
  if (Env("KILN_VULKAN_DISK_CACHE") == "0") return {};
  if (!option.empty()) return option;
  if (std::string dir = Env("KILN_CACHE_DIR"); !dir.empty()) return dir;
  if (std::string xdg = Env("XDG_CACHE_HOME"); !xdg.empty()) return fs::path(xdg) / "kiln";
  if (std::string home = Env("HOME"); !home.empty()) return fs::path(home) / ".cache" / "kiln";
  return {};
}

KernelCache::KernelCache(std::shared_ptr<Device> device, const fs::path& root, uint64_t max_bytes)
    : device_(std::move(device)), files_(root / "vulkan", max_bytes) {
  const PhysicalDeviceInfo& info = device_->info();
  device_key_ = "device " + HexBytes(info.uuid, VK_UUID_SIZE) + " (" + info.name + "), driver " +
                info.driver_name + " " + std::to_string(info.driver_version) + " (" + info.driver_info +
                "), kiln " KILN_VULKAN_KILN_VERSION ", " + ShaderCompilerIdentity();
}

StatusOr<std::unique_ptr<KernelCache>> KernelCache::Open(std::shared_ptr<Device> device, const fs::path& root,
                                                         uint64_t max_bytes) {
  std::unique_ptr<KernelCache> cache(new KernelCache(std::move(device), root, max_bytes));
  std::optional<std::vector<std::byte>> data = cache->files_.Load(cache->PipelineDataKey());
  if (data) {
    if (std::string foreign = cache->ForeignPipelineData(*data); !foreign.empty()) {
      CacheDebugMessage("ignoring the pipeline-cache data in " +
                        cache->files_.PathOf(cache->PipelineDataKey()).string() + ": " + foreign);
      data.reset();
    }
  }
  VkPipelineCacheCreateInfo create{};
  create.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO;
  if (data) {
    create.initialDataSize = data->size();
    create.pInitialData = data->data();
  }
  const Device& vulkan = *cache->device_;
  KILN_RETURN_IF_ERROR(
      Check(vulkan.api().vkCreatePipelineCache(vulkan.handle(), &create, nullptr, &cache->pipeline_cache_),
            "vkCreatePipelineCache"));
  cache->pipeline_data_loaded_ = data.has_value();
  cache->saved_bytes_ = data ? data->size() : 0;
  return cache;
}

KernelCache::~KernelCache() {
  if (pipeline_cache_ != VK_NULL_HANDLE)
    device_->api().vkDestroyPipelineCache(device_->handle(), pipeline_cache_, nullptr);
}

std::string KernelCache::PipelineDataKey() const { return "pipeline cache of " + device_key_; }

std::string KernelCache::SpirvKey(std::string_view glsl, const FloatControls& float_controls) const {
  auto widths = [](const FloatWidths& w) {
    return "f16 " + std::to_string(w.f16) + " f32 " + std::to_string(w.f32) + " f64 " + std::to_string(w.f64);
  };
  std::string key = "spirv for " + device_key_ + ", NaN preserved for " +
                    widths(float_controls.preserve_nan_inf_signed_zero) + ", denormals preserved for " +
                    widths(float_controls.preserve_denormals) + "\n";
  key += glsl;
  return key;
}

std::string KernelCache::ForeignPipelineData(std::span<const std::byte> data) const {
  PipelineCacheHeader header;
  if (data.size() < sizeof(header)) return "shorter than a pipeline-cache header";
  std::memcpy(&header, data.data(), sizeof(header));
  const PhysicalDeviceInfo& info = device_->info();
  if (header.header_version != VK_PIPELINE_CACHE_HEADER_VERSION_ONE || header.header_size < sizeof(header) ||
      header.header_size > data.size())
    return "an unknown pipeline-cache header";
  if (header.vendor_id != info.vendor_id || header.device_id != info.device_id ||
      std::memcmp(header.pipeline_cache_uuid, info.pipeline_cache_uuid, VK_UUID_SIZE) != 0)
    return "another device's or driver's data";
  return {};
}

std::optional<std::vector<uint32_t>> KernelCache::LoadSpirv(std::string_view glsl,
                                                            const FloatControls& float_controls) {
  std::optional<std::vector<std::byte>> bytes = files_.Load(SpirvKey(glsl, float_controls));
  if (!bytes) return std::nullopt;
  constexpr uint32_t kSpirvMagic = 0x07230203;
  std::vector<uint32_t> words(bytes->size() / sizeof(uint32_t));
  if (bytes->size() % sizeof(uint32_t) != 0 || words.size() < 5) return std::nullopt;
  std::memcpy(words.data(), bytes->data(), bytes->size());
  if (words[0] != kSpirvMagic) return std::nullopt;
  return words;
}

void KernelCache::StoreSpirv(std::string_view glsl, const FloatControls& float_controls,
                             std::span<const uint32_t> spirv) {
  files_.Store(SpirvKey(glsl, float_controls), std::as_bytes(spirv));
}

void KernelCache::SavePipelineCache() {
  const std::lock_guard<std::mutex> lock(save_mutex_);
  const DeviceFunctions& api = device_->api();
  size_t bytes = 0;
  if (api.vkGetPipelineCacheData(device_->handle(), pipeline_cache_, &bytes, nullptr) != VK_SUCCESS ||
      bytes == saved_bytes_)
    return;
  std::vector<std::byte> data(bytes);
  const VkResult got = api.vkGetPipelineCacheData(device_->handle(), pipeline_cache_, &bytes, data.data());
  if (got != VK_SUCCESS) {  // VK_INCOMPLETE: it grew meanwhile; a later save writes it
    CacheDebugMessage("vkGetPipelineCacheData: " + std::to_string(got));
    return;
  }
  data.resize(bytes);
  files_.Store(PipelineDataKey(), data);
  saved_bytes_ = bytes;
}

}  // namespace kiln::vulkan
