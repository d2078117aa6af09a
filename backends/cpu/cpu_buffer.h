// Host memory of the CPU backend: 64-byte aligned blocks (a cache line, and
// enough for any vector load the kernels emit), and the DeviceBuffer that
// owns one array in such a block.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/backend.h"

namespace kiln::cpu {

inline constexpr int64_t kBufferAlignment = 64;

struct AlignedFree {
  void operator()(void* pointer) const;
};
using AlignedBytes = std::unique_ptr<std::byte, AlignedFree>;

// Bytes of an array stored densely row-major (what every buffer and kernel
// of this backend uses, whatever layout the shape carries as metadata).
int64_t DenseByteSize(const Shape& shape);

// `bytes` rounded up to the alignment; a zero-byte request still returns a
// distinct non-null block so every array has an address. Null on failure.
AlignedBytes AllocateAligned(int64_t bytes);

class CpuBuffer : public DeviceBuffer {
 public:
  CpuBuffer(Shape shape, Device* device, AlignedBytes data);
  // A buffer of `shape` (an array) with unspecified contents; null when the
  // memory cannot be had.
  static std::unique_ptr<CpuBuffer> Allocate(const Shape& shape, Device* device);

  void* data() const { return data_.get(); }
  int64_t byte_size() const { return DenseByteSize(shape()); }
  StatusOr<Literal> ToLiteral() const override;

 private:
  AlignedBytes data_;
};

}  // namespace kiln::cpu
