#include "backends/cpu/cpu_buffer.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <span>

namespace kiln::cpu {

int64_t DenseByteSize(const Shape& shape) {
  if (!shape.IsArray()) return 0;
  const int64_t count = shape.element_count();
  const int64_t width = ByteWidth(shape.element_type());
  return count > INT64_MAX / width ? INT64_MAX : count * width;
}

CpuBuffer::CpuBuffer(Shape shape, Device* device, PooledBytes data, bool host_alias)
    : DeviceBuffer(std::move(shape), device), data_(std::move(data)), host_alias_(host_alias) {}

std::unique_ptr<CpuBuffer> CpuBuffer::Allocate(const Shape& shape, Device* device, HostMemoryPool& pool) {
  PooledBytes data = pool.Allocate(DenseByteSize(shape));
  if (data == nullptr) return nullptr;
  return std::make_unique<CpuBuffer>(shape, device, std::move(data));
}

StatusOr<Literal> CpuBuffer::ToLiteral() const {
  StatusOr<Literal> literal = Literal::FromBytes(
      shape(),
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(data()), static_cast<size_t>(byte_size())));
  if (!literal.ok()) return literal.status();
  literal->set_layout(shape().layout());
  return literal;
}

}  // namespace kiln::cpu
