// The DeviceBuffer of the CPU backend: one array, stored densely row-major in
// a 64-byte aligned block of the backend's HostMemoryPool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "backends/cpu/host_memory_pool.h"
#include "core/backend.h"

namespace kiln::cpu {

inline constexpr int64_t kBufferAlignment = HostMemoryPool::kAlignment;

// Bytes of an array stored densely row-major (what every buffer and kernel
// of this backend uses, whatever layout the shape carries as metadata).
int64_t DenseByteSize(const Shape& shape);

class CpuBuffer : public DeviceBuffer {
 public:
  // `host_alias`: `data` is host memory a caller lent (BufferAliasingHost).
  CpuBuffer(Shape shape, Device* device, PooledBytes data, bool host_alias = false);
  // A buffer of `shape` (an array) with unspecified contents, from `pool`;
  // null when the memory cannot be had.
  static std::unique_ptr<CpuBuffer> Allocate(const Shape& shape, Device* device, HostMemoryPool& pool);

  void* data() const { return data_.get(); }
  int64_t byte_size() const { return DenseByteSize(shape()); }
  StatusOr<Literal> ToLiteral() const override;
  bool aliases_host() const override { return host_alias_; }
  const void* host_data() const override { return data(); }

 private:
  PooledBytes data_;
  bool host_alias_;
};

}  // namespace kiln::cpu
