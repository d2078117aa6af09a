#include "backends/vulkan/vulkan_commands.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "backends/vulkan/vulkan_loader.h"

namespace kiln::vulkan {
namespace {

constexpr VkPipelineStageFlags kDeviceStages =
    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
constexpr VkAccessFlags kDeviceWrites = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
constexpr VkAccessFlags kDeviceAccesses = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                          VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;

}  // namespace

StatusOr<std::unique_ptr<CommandList>> CommandList::Create(std::shared_ptr<Device> device) {
  std::unique_ptr<CommandList> list(new CommandList(std::move(device)));
  const DeviceFunctions& api = list->device_->api();
  VkDevice handle = list->device_->handle();
  if (std::optional<Device::CommandResources> idle = list->device_->TakeCommandResources()) {
    list->pool_ = idle->pool;
    list->commands_ = idle->commands;
    list->fence_ = idle->fence;
  } else {
    // A pool per recording: pools are not thread-safe, and one per list lets
    // any thread record without locks. TRANSIENT: the buffer is recorded once
    // (a reused pool is reset as a whole).
    VkCommandPoolCreateInfo pool{};
    pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pool.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    pool.queueFamilyIndex = list->device_->queue_family();
    KILN_RETURN_IF_ERROR(
        Check(api.vkCreateCommandPool(handle, &pool, nullptr, &list->pool_), "vkCreateCommandPool"));
    list->device_->CountCommandPool();
    VkCommandBufferAllocateInfo allocate{};
    allocate.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    allocate.commandPool = list->pool_;
    allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocate.commandBufferCount = 1;
    KILN_RETURN_IF_ERROR(
        Check(api.vkAllocateCommandBuffers(handle, &allocate, &list->commands_), "vkAllocateCommandBuffers"));
    VkFenceCreateInfo fence{};
    fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    KILN_RETURN_IF_ERROR(Check(api.vkCreateFence(handle, &fence, nullptr, &list->fence_), "vkCreateFence"));
  }
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  KILN_RETURN_IF_ERROR(Check(api.vkBeginCommandBuffer(list->commands_, &begin), "vkBeginCommandBuffer"));
  return list;
}

CommandList::~CommandList() {
  const DeviceFunctions& api = device_->api();
  VkDevice handle = device_->handle();
  // The command buffer and descriptor pools must outlive the work.
  bool idle = !submitted_ || completed_;
  if (!idle) idle = Wait().ok();
  for (VkDescriptorPool pool : descriptor_pools_) api.vkDestroyDescriptorPool(handle, pool, nullptr);
  // Finished work leaves its pool, command buffer and fence for the next
  // list, reset; anything else (a failed wait) destroys them.
  if (idle && pool_ != VK_NULL_HANDLE && commands_ != VK_NULL_HANDLE && fence_ != VK_NULL_HANDLE &&
      api.vkResetCommandPool(handle, pool_, 0) == VK_SUCCESS &&
      api.vkResetFences(handle, 1, &fence_) == VK_SUCCESS &&
      device_->KeepCommandResources({pool_, commands_, fence_})) {
    return;
  }
  if (fence_ != VK_NULL_HANDLE) api.vkDestroyFence(handle, fence_, nullptr);
  // Freed explicitly, though destroying the pool would free it: the
  // validation layer (1.3.239) leaks its record of a command buffer freed
  // only with its pool.
  if (commands_ != VK_NULL_HANDLE) api.vkFreeCommandBuffers(handle, pool_, 1, &commands_);
  if (pool_ != VK_NULL_HANDLE) api.vkDestroyCommandPool(handle, pool_, nullptr);
}

Status CommandList::BeginStep(const char* what) {
  if (submitted_)
    return FailedPrecondition("vulkan: ", what, " recorded into a command list already submitted");
  if (steps_ > 0) {
    // A full memory barrier between consecutive steps: every earlier
    // compute or transfer write is visible to every later access. It is
    // conservative (independent steps could overlap) but always correct.
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, kDeviceWrites, kDeviceAccesses};
    device_->api().vkCmdPipelineBarrier(commands_, kDeviceStages, kDeviceStages, 0, 1, &barrier, 0, nullptr,
                                        0, nullptr);
  }
  ++steps_;
  return OkStatus();
}

Status CommandList::Dispatch(const std::shared_ptr<Kernel>& kernel,
                             std::span<const std::shared_ptr<Buffer>> buffers,
                             std::span<const std::byte> push_constants, std::array<uint32_t, 3> groups) {
  std::vector<BufferRange> ranges;
  ranges.reserve(buffers.size());
  for (const std::shared_ptr<Buffer>& buffer : buffers) ranges.push_back({buffer, 0, 0});
  return Dispatch(kernel, ranges, push_constants, groups);
}

Status CommandList::Dispatch(const std::shared_ptr<Kernel>& kernel, std::span<const BufferRange> ranges,
                             std::span<const std::byte> push_constants, std::array<uint32_t, 3> groups) {
  if (kernel == nullptr) return InvalidArgument("vulkan: a dispatch without a kernel");
  const std::string label = "vulkan: dispatch of kernel \"" + kernel->name() + "\": ";
  if (&kernel->device() != device_.get())
    return InvalidArgument(label, "the kernel was made for another device");
  if (ranges.size() != kernel->buffer_count()) {
    return InvalidArgument(label, ranges.size(), " buffers given, the kernel binds ", kernel->buffer_count());
  }
  const uint64_t alignment = std::max<uint64_t>(1, device_->features().min_storage_buffer_offset_alignment);
  for (size_t i = 0; i < ranges.size(); ++i) {
    const std::shared_ptr<Buffer>& buffer = ranges[i].buffer;
    if (buffer == nullptr || buffer->kind() != BufferKind::kStorage || &buffer->device() != device_.get()) {
      return InvalidArgument(label, "buffer ", i, " is missing, not a storage buffer, or on another device");
    }
    if (ranges[i].offset % alignment != 0 || ranges[i].offset > buffer->allocated_size() ||
        ranges[i].size > buffer->allocated_size() - ranges[i].offset) {
      return InvalidArgument(label, "binding ", i, " covers bytes ", ranges[i].offset, " + ", ranges[i].size,
                             " of a ", buffer->allocated_size(), "-byte buffer (offsets are multiples of ",
                             alignment, ")");
    }
  }
  if (push_constants.size() != kernel->push_constant_bytes()) {
    return InvalidArgument(label, push_constants.size(), " bytes of push constants given, the kernel takes ",
                           kernel->push_constant_bytes());
  }
  const DeviceFeatures& limits = device_->features();
  for (int d = 0; d < 3; ++d) {
    if (groups[d] > limits.max_workgroup_count[d]) {
      return InvalidArgument(label, groups[d], " workgroups in dimension ", d,
                             " exceed the device's limit of ", limits.max_workgroup_count[d]);
    }
  }
  if (groups[0] == 0 || groups[1] == 0 || groups[2] == 0) return OkStatus();
  KILN_RETURN_IF_ERROR(BeginStep("a dispatch"));

  const DeviceFunctions& api = device_->api();
  api.vkCmdBindPipeline(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, kernel->pipeline());
  if (!ranges.empty()) {
    std::vector<VkDescriptorBufferInfo> infos(ranges.size());
    std::vector<VkWriteDescriptorSet> writes(ranges.size());
    for (size_t i = 0; i < ranges.size(); ++i) {
      const Buffer& buffer = *ranges[i].buffer;
      // A zero-byte range binds what is allocated from the offset on (at
      // least 4 bytes, so that an empty array can still be bound).
      const uint64_t size = ranges[i].size > 0 ? (ranges[i].size + 3) / 4 * 4 : 0;
      infos[i] = {buffer.handle(), ranges[i].offset,
                  size > 0 && ranges[i].offset + size <= buffer.allocated_size() ? size : VK_WHOLE_SIZE};
      writes[i] = {};
      writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
      writes[i].dstBinding = static_cast<uint32_t>(i);
      writes[i].descriptorCount = 1;
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[i].pBufferInfo = &infos[i];
    }
    // Push descriptors (VK_KHR_push_descriptor, on nearly every desktop
    // driver and on lavapipe) put the bindings in the command buffer itself:
    // no pool to size, no set to allocate or free, nothing shared between
    // threads. Devices without them get a descriptor pool per dispatch,
    // owned by this list and freed with it: simple and correct, and the cost
    // falls only on such devices.
    if (device_->features().push_descriptors) {
      api.vkCmdPushDescriptorSetKHR(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, kernel->pipeline_layout(), 0,
                                    static_cast<uint32_t>(writes.size()), writes.data());
    } else {
      VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, static_cast<uint32_t>(ranges.size())};
      VkDescriptorPoolCreateInfo pool_info{};
      pool_info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
      pool_info.maxSets = 1;
      pool_info.poolSizeCount = 1;
      pool_info.pPoolSizes = &size;
      VkDescriptorPool pool = VK_NULL_HANDLE;
      KILN_RETURN_IF_ERROR(Check(api.vkCreateDescriptorPool(device_->handle(), &pool_info, nullptr, &pool),
                                 "vkCreateDescriptorPool"));
      descriptor_pools_.push_back(pool);
      VkDescriptorSetLayout layout = kernel->set_layout();
      VkDescriptorSetAllocateInfo allocate{};
      allocate.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
      allocate.descriptorPool = pool;
      allocate.descriptorSetCount = 1;
      allocate.pSetLayouts = &layout;
      VkDescriptorSet set = VK_NULL_HANDLE;
      KILN_RETURN_IF_ERROR(Check(api.vkAllocateDescriptorSets(device_->handle(), &allocate, &set),
                                 "vkAllocateDescriptorSets"));
      for (VkWriteDescriptorSet& write : writes) write.dstSet = set;
      api.vkUpdateDescriptorSets(device_->handle(), static_cast<uint32_t>(writes.size()), writes.data(), 0,
                                 nullptr);
      api.vkCmdBindDescriptorSets(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, kernel->pipeline_layout(), 0, 1,
                                  &set, 0, nullptr);
    }
  }
  if (!push_constants.empty()) {
    api.vkCmdPushConstants(commands_, kernel->pipeline_layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0,
                           static_cast<uint32_t>(push_constants.size()), push_constants.data());
  }
  api.vkCmdDispatch(commands_, groups[0], groups[1], groups[2]);
  kernels_.push_back(kernel);
  for (const BufferRange& range : ranges) buffers_.push_back(range.buffer);
  return OkStatus();
}

Status CommandList::Copy(const std::shared_ptr<Buffer>& src, uint64_t src_offset,
                         const std::shared_ptr<Buffer>& dst, uint64_t dst_offset, uint64_t size) {
  if (src == nullptr || dst == nullptr) return InvalidArgument("vulkan: a copy without a source or a target");
  if (&src->device() != device_.get() || &dst->device() != device_.get()) {
    return InvalidArgument("vulkan: a copy between buffers of another device");
  }
  if (src_offset > src->size() || size > src->size() - src_offset || dst_offset > dst->size() ||
      size > dst->size() - dst_offset) {
    return OutOfRange("vulkan: a copy of ", size, " bytes from offset ", src_offset, " of a ", src->size(),
                      "-byte buffer to offset ", dst_offset, " of a ", dst->size(),
                      "-byte buffer does not fit");
  }
  if (size == 0) return OkStatus();
  if (src == dst && src_offset < dst_offset + size && dst_offset < src_offset + size) {
    return InvalidArgument("vulkan: a copy within one buffer whose ranges overlap");
  }
  KILN_RETURN_IF_ERROR(BeginStep("a copy"));
  VkBufferCopy region{src_offset, dst_offset, size};
  device_->api().vkCmdCopyBuffer(commands_, src->handle(), dst->handle(), 1, &region);
  buffers_.push_back(src);
  buffers_.push_back(dst);
  return OkStatus();
}

Status CommandList::Fill(const std::shared_ptr<Buffer>& buffer, uint64_t offset, uint64_t size,
                         uint32_t value) {
  if (buffer == nullptr) return InvalidArgument("vulkan: a fill without a buffer");
  if (&buffer->device() != device_.get())
    return InvalidArgument("vulkan: a fill of a buffer of another device");
  if (offset % 4 != 0 || size % 4 != 0) {
    return InvalidArgument("vulkan: a fill of ", size, " bytes at offset ", offset,
                           "; both must be multiples of 4 (the fill writes 32-bit words)");
  }
  if (offset > buffer->size() || size > buffer->size() - offset) {
    return OutOfRange("vulkan: a fill of ", size, " bytes at offset ", offset,
                      " does not fit in a buffer of ", buffer->size(), " bytes");
  }
  if (size == 0) return OkStatus();
  KILN_RETURN_IF_ERROR(BeginStep("a fill"));
  device_->api().vkCmdFillBuffer(commands_, buffer->handle(), offset, size, value);
  buffers_.push_back(buffer);
  return OkStatus();
}

Status CommandList::Submit() {
  if (submitted_) return FailedPrecondition("vulkan: a command list submitted twice");
  const DeviceFunctions& api = device_->api();
  if (steps_ > 0) {
    // Device writes become visible to the host once the fence signals.
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, kDeviceWrites,
                            VK_ACCESS_HOST_READ_BIT};
    api.vkCmdPipelineBarrier(commands_, kDeviceStages, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, nullptr,
                             0, nullptr);
  }
  KILN_RETURN_IF_ERROR(Check(api.vkEndCommandBuffer(commands_), "vkEndCommandBuffer"));
  submitted_ = true;
  Status status = device_->Submit(commands_, fence_);
  if (!status.ok()) completed_ = true;  // nothing is in flight to wait for
  return status;
}

Status CommandList::Wait() {
  if (!submitted_) return FailedPrecondition("vulkan: waiting on a command list never submitted");
  if (completed_) return OkStatus();
  KILN_RETURN_IF_ERROR(Check(
      device_->api().vkWaitForFences(device_->handle(), 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences"));
  completed_ = true;
  return OkStatus();
}

Status CommandList::SubmitAndWait() {
  KILN_RETURN_IF_ERROR(Submit());
  return Wait();
}

}  // namespace kiln::vulkan
