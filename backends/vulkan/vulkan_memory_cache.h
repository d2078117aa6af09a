// Device memory kept for reuse. Allocating device memory is slow on real
// drivers (an H200 took about 1.3 ms per execute while every execute
// allocated its scratch block and each result), so a buffer that dies hands
// its allocation here, and the next buffer of the same kind and size class
// takes it instead of calling vkAllocateMemory. Sizes are rounded up to
// classes a quarter-octave apart (at most 25% more memory), so that sizes
// that differ a little share allocations. Idle memory is bounded: past the
// capacity a dying buffer's memory is freed. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "backends/vulkan/vulkan_api.h"

namespace kiln::vulkan {

enum class BufferKind {
  kStorage,  // bound to shaders; device-local
  kStaging,  // host-visible, a source or target of copies
};

// One buffer's Vulkan objects, bound together, as a dying buffer leaves them.
struct Allocation {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  bool coherent = true;
  uint64_t bytes = 0;  // the VkBuffer's size: a size class
};

// The size class of a request: at least 256 bytes, a multiple of 256, and
// within a quarter-octave above `bytes`; never above `limit` (the device's
// largest buffer) unless `bytes` itself is.
uint64_t AllocationClass(uint64_t bytes, uint64_t limit);

class MemoryCache {
 public:
  explicit MemoryCache(uint64_t capacity_bytes) : capacity_(capacity_bytes) {}

  // An idle allocation of exactly `bytes` (a size class) and `kind`, if any.
  std::optional<Allocation> Take(BufferKind kind, uint64_t bytes);
  // Keeps `allocation` for reuse when the idle total stays within the
  // capacity; false when the caller must free it.
  bool Keep(BufferKind kind, const Allocation& allocation);
  // Removes every idle allocation (for the caller to free): before the
  // device goes, or to retry an allocation the device refused.
  std::vector<Allocation> TakeAll();

  uint64_t idle_bytes() const;
  uint64_t capacity() const { return capacity_; }

 private:
  const uint64_t capacity_;
  mutable std::mutex mutex_;
  std::multimap<std::pair<BufferKind, uint64_t>, Allocation> idle_;
  uint64_t idle_bytes_ = 0;
};

}  // namespace kiln::vulkan
