// A compute kernel: a pipeline made from SPIR-V words, with `buffer_count`
// storage buffers at descriptor set 0, bindings 0..buffer_count-1, up to 128
// bytes of push constants, and its workgroup size X given as specialization
// constant 0 (the shader declares `layout(local_size_x_id = 0) in;`), so one
// SPIR-V module serves every workgroup size. Immutable once created: one
// kernel may be dispatched from many threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/vulkan/vulkan_api.h"
#include "backends/vulkan/vulkan_device.h"
#include "core/status.h"

namespace kiln::vulkan {

struct KernelSpec {
  std::string name;  // for messages
  std::vector<uint32_t> spirv;
  std::string entry_point = "main";
  uint32_t buffer_count = 0;
  uint32_t push_constant_bytes = 0;  // a multiple of 4, at most 128
  uint32_t workgroup_size_x = 64;
  // Further 32-bit specialization constants, ids 1, 2, ... in order (tile
  // sizes and the like).
  std::vector<uint32_t> specialization;
  // The pipeline cache the driver consults and fills; null: the device's
  // (in memory only). The on-disk one is KernelCache::pipeline_cache().
  VkPipelineCache pipeline_cache = VK_NULL_HANDLE;
};

class Kernel {
 public:
  // INVALID_ARGUMENT when the spec breaks the device's limits (buffers per
  // stage, push-constant bytes, workgroup size) or the words are not SPIR-V;
  // INTERNAL, naming the kernel, when the driver refuses the pipeline.
  static StatusOr<std::shared_ptr<Kernel>> Create(std::shared_ptr<Device> device, const KernelSpec& spec);
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  const std::string& name() const { return name_; }
  uint32_t buffer_count() const { return buffer_count_; }
  uint32_t push_constant_bytes() const { return push_constant_bytes_; }
  uint32_t workgroup_size_x() const { return workgroup_size_x_; }
  VkPipeline pipeline() const { return pipeline_; }
  VkPipelineLayout pipeline_layout() const { return pipeline_layout_; }
  VkDescriptorSetLayout set_layout() const { return set_layout_; }
  Device& device() const { return *device_; }

 private:
  Kernel() = default;

  std::shared_ptr<Device> device_;
  std::string name_;
  uint32_t buffer_count_ = 0;
  uint32_t push_constant_bytes_ = 0;
  uint32_t workgroup_size_x_ = 0;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout pipeline_layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
};

}  // namespace kiln::vulkan
