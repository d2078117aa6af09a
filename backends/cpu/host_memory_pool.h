// A caching allocator for the CPU backend's buffers and temporaries.
//
// Large blocks straight from malloc are fresh mmap'd pages on Linux: every
// execute that allocates a 64 MB result pays ~16K page faults and a TLB
// shootdown when it is freed, which costs more than the kernel that fills it.
// The pool keeps released blocks of 256 KiB and more (in size classes an
// eighth of a power of two apart) and hands them out again; blocks of 2 MiB
// and more are 2 MiB aligned and advised as transparent huge pages. Smaller
// blocks go to malloc, which already caches them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace kiln::cpu {

class HostMemoryPool;

// Returns a block to its pool (or to free() when it has none).
// A block that is not the pool's or malloc's (host memory a caller lends a
// buffer) carries `release` instead, which gives it back.
struct PooledFree {
  std::shared_ptr<HostMemoryPool> pool;
  int64_t capacity = 0;
  std::function<void()> release;
  void operator()(std::byte* block) const;
};
using PooledBytes = std::unique_ptr<std::byte, PooledFree>;

class HostMemoryPool : public std::enable_shared_from_this<HostMemoryPool> {
 public:
  // Blocks below this size are not cached.
  static constexpr int64_t kMinCachedBytes = int64_t{256} << 10;
  // Every block is aligned to at least this (a cache line, and enough for
  // any vector load the kernels emit).
  static constexpr int64_t kAlignment = 64;

  // `max_cached_bytes`: released bytes kept for reuse at most; beyond it a
  // released block is freed.
  static std::shared_ptr<HostMemoryPool> Create(int64_t max_cached_bytes);
  ~HostMemoryPool();
  HostMemoryPool(const HostMemoryPool&) = delete;
  HostMemoryPool& operator=(const HostMemoryPool&) = delete;

  // At least `bytes` (zero gives a distinct non-null block), 64-byte aligned,
  // contents unspecified. Null when the memory cannot be had. Thread-safe.
  PooledBytes Allocate(int64_t bytes);

  // Frees every cached block. Thread-safe.
  void Trim();

  int64_t cached_bytes() const;
  // How many Allocate calls were served from the cache (for tests).
  int64_t reuse_count() const;

  // The capacity a request of `bytes` is rounded up to.
  static int64_t CapacityFor(int64_t bytes);

 private:
  explicit HostMemoryPool(int64_t max_cached_bytes);
  friend struct PooledFree;
  void Release(std::byte* block, int64_t capacity);

  const int64_t max_cached_bytes_;
  mutable std::mutex mutex_;
  std::map<int64_t, std::vector<std::byte*>> free_blocks_;  // by capacity
  int64_t cached_bytes_ = 0;
  int64_t reuse_count_ = 0;
};

// Default cache bound: an eighth of physical memory, at most 4 GiB.
int64_t DefaultMaxCachedBytes();

}  // namespace kiln::cpu
