#include "backends/vulkan/vulkan_memory_cache.h"

#include <algorithm>
#include <bit>

namespace kiln::vulkan {

uint64_t AllocationClass(uint64_t bytes, uint64_t limit) {
  constexpr uint64_t kMinimum = 256;
  const uint64_t rounded4 = std::max<uint64_t>(4, (bytes + 3) / 4 * 4);
  if (bytes <= kMinimum) return std::max(rounded4, std::min(kMinimum, limit));
  const uint64_t octave = std::bit_floor(bytes);
  const uint64_t step = std::max(kMinimum, octave / 4);
  const uint64_t size_class = (bytes + step - 1) / step * step;
  return size_class <= limit ? size_class : std::max(rounded4, limit);
}

std::optional<Allocation> MemoryCache::Take(BufferKind kind, uint64_t bytes) {
  const std::lock_guard<std::mutex> lock(mutex_);
  auto it = idle_.find({kind, bytes});
  if (it == idle_.end()) return std::nullopt;
  Allocation allocation = it->second;
  idle_.erase(it);
  idle_bytes_ -= allocation.bytes;
  return allocation;
}

bool MemoryCache::Keep(BufferKind kind, const Allocation& allocation) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (allocation.bytes > capacity_ || idle_bytes_ > capacity_ - allocation.bytes) return false;
  idle_.emplace(std::make_pair(kind, allocation.bytes), allocation);
  idle_bytes_ += allocation.bytes;
  return true;
}

std::vector<Allocation> MemoryCache::TakeAll() {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Allocation> all;
  all.reserve(idle_.size());
  for (auto& [key, allocation] : idle_) all.push_back(allocation);
  idle_.clear();
  idle_bytes_ = 0;
  return all;
}

uint64_t MemoryCache::idle_bytes() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return idle_bytes_;
}

}  // namespace kiln::vulkan
