#include "backends/vulkan/vulkan_array.h"

#include "core/lowering/step_program.h"

namespace kiln::vulkan {

StatusOr<std::unique_ptr<VulkanArray>> VulkanArray::FromLiteral(const Literal& literal, kiln::Device* device,
                                                                const std::shared_ptr<Device>& vulkan) {
  if (!literal.shape().IsArray())
    return InvalidArgument("vulkan: a buffer holds one array, got ", literal.shape().ToString());
  const int64_t bytes = DenseBytes(literal.shape());
  if (static_cast<int64_t>(literal.raw().size()) != bytes) {
    return InvalidArgument("vulkan: literal of ", literal.shape().ToString(), " holds ", literal.raw().size(),
                           " bytes, expected ", bytes);
  }
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buffer, Buffer::Create(vulkan, static_cast<uint64_t>(bytes)));
  if (bytes > 0) KILN_RETURN_IF_ERROR(buffer->Upload(literal.raw().data(), static_cast<uint64_t>(bytes)));
  return std::make_unique<VulkanArray>(literal.shape(), device, std::move(buffer));
}

StatusOr<Literal> VulkanArray::ToLiteral() const {
  Literal literal(shape());
  const int64_t bytes = DenseBytes(shape());
  if (bytes > 0) KILN_RETURN_IF_ERROR(buffer_->Download(literal.raw().data(), static_cast<uint64_t>(bytes)));
  return literal;
}

}  // namespace kiln::vulkan
