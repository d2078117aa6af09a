// The compiled kernels of one Vulkan device that outlive the process, in
// DIRECTORY/vulkan (DiskCache files): the SPIR-V of each GLSL kernel, so a
// later process skips glslang and SPIRV-Tools, and the driver's
// VkPipelineCache data, so the driver can skip its own compile. Every key
// holds the device's UUID, its driver and driver version, Kiln's version and
// the shader compiler's identity, so another device, driver or Kiln reads
// nothing it did not write; pipeline-cache data is also checked against the
// device's own header fields before the driver sees it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/vulkan/disk_cache.h"
#include "backends/vulkan/spirv_float_controls.h"
#include "backends/vulkan/vulkan_device.h"

namespace kiln::vulkan {

// Where compiled kernels are cached: `option` (CompileOptions::cache_dir)
// when set, else KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else
// $HOME/.cache/kiln (where other compilers keep their caches); empty, for
// no disk cache, when KILN_VULKAN_DISK_CACHE=0 or none of these is set.
std::filesystem::path KernelCacheDirectory(const std::string& option);

class KernelCache {
 public:
  // The cache of `device` under `root` (a KernelCacheDirectory answer), with
  // a pipeline cache seeded from the data stored there when it is this
  // device's. INTERNAL only when the driver cannot create a pipeline cache.
  static StatusOr<std::unique_ptr<KernelCache>> Open(std::shared_ptr<Device> device,
                                                     const std::filesystem::path& root, uint64_t max_bytes);
  ~KernelCache();
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // The SPIR-V CompileGlslToSpirv made for `glsl` and `float_controls` on this
  // device, or nothing. Thread-safe.
  std::optional<std::vector<uint32_t>> LoadSpirv(std::string_view glsl, const FloatControls& float_controls);
  void StoreSpirv(std::string_view glsl, const FloatControls& float_controls,
                  std::span<const uint32_t> spirv);

  // The pipeline cache kernels are created with (KernelSpec::pipeline_cache).
  VkPipelineCache pipeline_cache() const { return pipeline_cache_; }
  // Whether stored pipeline-cache data seeded it.
  bool pipeline_data_loaded() const { return pipeline_data_loaded_; }
  // Writes the pipeline cache's data when it grew since it was loaded or
  // last saved (after new pipelines were made). Thread-safe.
  void SavePipelineCache();

  DiskCache& files() { return files_; }
  // The keys of the stored pipeline-cache data and of a kernel's SPIR-V.
  std::string PipelineDataKey() const;
  std::string SpirvKey(std::string_view glsl, const FloatControls& float_controls) const;

 private:
  KernelCache(std::shared_ptr<Device> device, const std::filesystem::path& root, uint64_t max_bytes);
  // Why `data` cannot be this device's pipeline-cache data, or empty.
  std::string ForeignPipelineData(std::span<const std::byte> data) const;

  std::shared_ptr<Device> device_;
  DiskCache files_;
  std::string device_key_;
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  bool pipeline_data_loaded_ = false;
  std::mutex save_mutex_;
  size_t saved_bytes_ = 0;  // of pipeline-cache data, as loaded or last saved
};

}  // namespace kiln::vulkan
