#include "backends/vulkan/vulkan_kernel.h"

#include <algorithm>

#include "backends/vulkan/vulkan_loader.h"

namespace kiln::vulkan {
namespace {

// The most push-constant bytes a kernel may take: every device has at least
// 128, so kernels written to that limit run everywhere.
constexpr uint32_t kMaxPushConstantBytes = 128;
constexpr uint32_t kSpirvMagic = 0x07230203;

}  // namespace

StatusOr<std::shared_ptr<Kernel>> Kernel::Create(std::shared_ptr<Device> device, const KernelSpec& spec) {
  const DeviceFeatures& limits = device->features();
  const std::string label = "vulkan: kernel \"" + spec.name + "\": ";
  if (spec.spirv.size() < 5 || spec.spirv[0] != kSpirvMagic) {
    return InvalidArgument(label, "the code is not a SPIR-V module (", spec.spirv.size(),
                           " words, no SPIR-V magic number first)");
  }
  if (spec.buffer_count > limits.max_storage_buffers_per_stage) {
    return InvalidArgument(label, spec.buffer_count, " storage buffers exceed the device's limit of ",
                           limits.max_storage_buffers_per_stage, " per dispatch");
  }
  const uint32_t max_push = std::min(kMaxPushConstantBytes, limits.max_push_constant_bytes);
  if (spec.push_constant_bytes % 4 != 0 || spec.push_constant_bytes > max_push) {
    return InvalidArgument(label, spec.push_constant_bytes, " bytes of push constants; the limit is ",
                           max_push, " bytes, in multiples of 4");
  }
  if (spec.workgroup_size_x == 0 || spec.workgroup_size_x > limits.max_workgroup_size[0] ||
      spec.workgroup_size_x > limits.max_workgroup_invocations) {
    return InvalidArgument(label, "workgroup size ", spec.workgroup_size_x, " is outside 1..",
                           std::min(limits.max_workgroup_size[0], limits.max_workgroup_invocations),
                           " on this device");
  }

  std::shared_ptr<Kernel> kernel(new Kernel());
  kernel->device_ = device;
  kernel->name_ = spec.name;
  kernel->buffer_count_ = spec.buffer_count;
  kernel->push_constant_bytes_ = spec.push_constant_bytes;
  kernel->workgroup_size_x_ = spec.workgroup_size_x;
  const DeviceFunctions& api = device->api();
  VkDevice handle = device->handle();

  std::vector<VkDescriptorSetLayoutBinding> bindings(spec.buffer_count);
  for (uint32_t i = 0; i < spec.buffer_count; ++i) {
    bindings[i].binding = i;
    bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo set_layout{};
  set_layout.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  // Push descriptors where the device has them (see vulkan_commands.cc).
  if (limits.push_descriptors) set_layout.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  set_layout.bindingCount = spec.buffer_count;
  set_layout.pBindings = bindings.data();
  KILN_RETURN_IF_ERROR(
      Check(api.vkCreateDescriptorSetLayout(handle, &set_layout, nullptr, &kernel->set_layout_),
            "vkCreateDescriptorSetLayout (" + spec.name + ")"));

  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, spec.push_constant_bytes};
  VkPipelineLayoutCreateInfo pipeline_layout{};
  pipeline_layout.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  pipeline_layout.setLayoutCount = 1;
  pipeline_layout.pSetLayouts = &kernel->set_layout_;
  pipeline_layout.pushConstantRangeCount = spec.push_constant_bytes > 0 ? 1 : 0;
  pipeline_layout.pPushConstantRanges = &push;
  KILN_RETURN_IF_ERROR(
      Check(api.vkCreatePipelineLayout(handle, &pipeline_layout, nullptr, &kernel->pipeline_layout_),
            "vkCreatePipelineLayout (" + spec.name + ")"));

  VkShaderModuleCreateInfo module_info{};
  module_info.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  module_info.codeSize = spec.spirv.size() * sizeof(uint32_t);
  module_info.pCode = spec.spirv.data();
  VkShaderModule module = VK_NULL_HANDLE;
  KILN_RETURN_IF_ERROR(Check(api.vkCreateShaderModule(handle, &module_info, nullptr, &module),
                             "vkCreateShaderModule (" + spec.name + ")"));

  // Constant 0 is the workgroup size X; 1.. are the spec's further constants.
  std::vector<uint32_t> values;
  values.push_back(spec.workgroup_size_x);
  values.insert(values.end(), spec.specialization.begin(), spec.specialization.end());
  std::vector<VkSpecializationMapEntry> entries(values.size());
  for (uint32_t i = 0; i < values.size(); ++i) {
    entries[i] = {i, static_cast<uint32_t>(i * sizeof(uint32_t)), sizeof(uint32_t)};
  }
  VkSpecializationInfo specialization{static_cast<uint32_t>(entries.size()), entries.data(),
                                      values.size() * sizeof(uint32_t), values.data()};
  VkComputePipelineCreateInfo pipeline{};
  pipeline.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  pipeline.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  pipeline.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pipeline.stage.module = module;
  pipeline.stage.pName = spec.entry_point.c_str();
  pipeline.stage.pSpecializationInfo = &specialization;
  pipeline.layout = kernel->pipeline_layout_;
  const VkResult created = api.vkCreateComputePipelines(
      handle, spec.pipeline_cache != VK_NULL_HANDLE ? spec.pipeline_cache : device->pipeline_cache(), 1,
      &pipeline, nullptr, &kernel->pipeline_);
  // The pipeline keeps what it needs; the module is not needed after.
  api.vkDestroyShaderModule(handle, module, nullptr);
  KILN_RETURN_IF_ERROR(Check(created, "vkCreateComputePipelines (kernel \"" + spec.name + "\")"));
  return kernel;
}

Kernel::~Kernel() {
  const DeviceFunctions& api = device_->api();
  VkDevice handle = device_->handle();
  if (pipeline_ != VK_NULL_HANDLE) api.vkDestroyPipeline(handle, pipeline_, nullptr);
  if (pipeline_layout_ != VK_NULL_HANDLE) api.vkDestroyPipelineLayout(handle, pipeline_layout_, nullptr);
  if (set_layout_ != VK_NULL_HANDLE) api.vkDestroyDescriptorSetLayout(handle, set_layout_, nullptr);
}

}  // namespace kiln::vulkan
