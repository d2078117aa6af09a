#include "backends/cpu/host_memory_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdlib>

namespace kiln::cpu {
namespace {

constexpr int64_t kHugePageBytes = int64_t{2} << 20;

std::byte* AllocateBlock(int64_t capacity) {
  const int64_t alignment = capacity >= kHugePageBytes ? kHugePageBytes : HostMemoryPool::kAlignment;
  void* block = nullptr;
  if (posix_memalign(&block, static_cast<size_t>(alignment), static_cast<size_t>(capacity)) != 0)
    return nullptr;
#ifdef MADV_HUGEPAGE
  // Fewer page faults and TLB misses on big arrays; only advice, so a
  // failure changes nothing.
  if (capacity >= kHugePageBytes) madvise(block, static_cast<size_t>(capacity), MADV_HUGEPAGE);
#endif
  return static_cast<std::byte*>(block);
}

}  // namespace

void PooledFree::operator()(std::byte* block) const {
  if (release) {
    release();
  } else if (pool != nullptr) {
    pool->Release(block, capacity);
  } else {
    std::free(block);
  }
}

std::shared_ptr<HostMemoryPool> HostMemoryPool::Create(int64_t max_cached_bytes) {
  return std::shared_ptr<HostMemoryPool>(new HostMemoryPool(max_cached_bytes));
}

HostMemoryPool::HostMemoryPool(int64_t max_cached_bytes)
    : max_cached_bytes_(std::max<int64_t>(max_cached_bytes, 0)) {}

HostMemoryPool::~HostMemoryPool() { Trim(); }

int64_t HostMemoryPool::CapacityFor(int64_t bytes) {
  const int64_t at_least = (std::max<int64_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
  if (at_least < kMinCachedBytes) return at_least;
  // Eight classes per power of two: at most 12.5% more than asked.
  const int64_t power = int64_t{1} << (63 - std::countl_zero(static_cast<uint64_t>(at_least)));
  const int64_t step = power / 8;
  return (at_least + step - 1) / step * step;
}

PooledBytes HostMemoryPool::Allocate(int64_t bytes) {
  if (bytes < 0 || bytes > (int64_t{1} << 62)) return PooledBytes(nullptr, PooledFree{});
  const int64_t capacity = CapacityFor(bytes);
  if (capacity < kMinCachedBytes) return PooledBytes(AllocateBlock(capacity), PooledFree{});
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = free_blocks_.find(capacity);
    if (found != free_blocks_.end() && !found->second.empty()) {
      std::byte* block = found->second.back();
      found->second.pop_back();
      cached_bytes_ -= capacity;
      ++reuse_count_;
      return PooledBytes(block, PooledFree{shared_from_this(), capacity, {}});
    }
  }
  std::byte* block = AllocateBlock(capacity);
  if (block == nullptr) {
    Trim();  // the cache may be what stands in the way
    block = AllocateBlock(capacity);
    if (block == nullptr) return PooledBytes(nullptr, PooledFree{});
  }
  return PooledBytes(block, PooledFree{shared_from_this(), capacity, {}});
}

void HostMemoryPool::Release(std::byte* block, int64_t capacity) {
  if (block == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cached_bytes_ + capacity <= max_cached_bytes_) {
      free_blocks_[capacity].push_back(block);
      cached_bytes_ += capacity;
      return;
    }
  }
  std::free(block);
}

void HostMemoryPool::Trim() {
  std::map<int64_t, std::vector<std::byte*>> blocks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    blocks.swap(free_blocks_);
    cached_bytes_ = 0;
  }
  for (auto& [capacity, list] : blocks) {
    for (std::byte* block : list) std::free(block);
  }
}

int64_t HostMemoryPool::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cached_bytes_;
}

int64_t HostMemoryPool::reuse_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return reuse_count_;
}

int64_t DefaultMaxCachedBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  const int64_t physical = pages > 0 && page_size > 0 ? int64_t{pages} * page_size : int64_t{8} << 30;
  return std::min<int64_t>(physical / 8, int64_t{4} << 30);
}

}  // namespace kiln::cpu
