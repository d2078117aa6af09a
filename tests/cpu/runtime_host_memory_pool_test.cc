#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/host_memory_pool.h"

namespace kiln::cpu {
namespace {

TEST(HostMemoryPoolTest, CapacityRoundsToAnEighthOfAPowerOfTwo) {
  EXPECT_EQ(HostMemoryPool::CapacityFor(0), 64);
  EXPECT_EQ(HostMemoryPool::CapacityFor(65), 128);
  EXPECT_EQ(HostMemoryPool::CapacityFor(int64_t{1} << 20), int64_t{1} << 20);
  EXPECT_EQ(HostMemoryPool::CapacityFor((int64_t{1} << 20) + 1), (int64_t{1} << 20) + (int64_t{1} << 17));
  const int64_t odd = 67'108'864 - 4;  // just under 64 MiB
  EXPECT_EQ(HostMemoryPool::CapacityFor(odd), int64_t{64} << 20);
}

TEST(HostMemoryPoolTest, ReleasedLargeBlockIsReused) {
  auto pool = HostMemoryPool::Create(int64_t{64} << 20);
  std::byte* first = nullptr;
  {
    PooledBytes block = pool->Allocate(int64_t{3} << 20);
    ASSERT_NE(block, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block.get()) % HostMemoryPool::kAlignment, 0u);
    std::memset(block.get(), 7, size_t{3} << 20);
    first = block.get();
  }
  EXPECT_EQ(pool->cached_bytes(), int64_t{3} << 20);
  PooledBytes again = pool->Allocate((int64_t{3} << 20) - 100);  // same size class
  EXPECT_EQ(again.get(), first);
  EXPECT_EQ(pool->reuse_count(), 1);
  EXPECT_EQ(pool->cached_bytes(), 0);
}

TEST(HostMemoryPoolTest, SmallBlocksAreNotCached) {
  auto pool = HostMemoryPool::Create(int64_t{64} << 20);
  {
    PooledBytes block = pool->Allocate(1000);
    ASSERT_NE(block, nullptr);
  }
  EXPECT_EQ(pool->cached_bytes(), 0);
  PooledBytes empty = pool->Allocate(0);
  EXPECT_NE(empty, nullptr);  // every array has an address
}

TEST(HostMemoryPoolTest, CacheStaysWithinItsBound) {
  auto pool = HostMemoryPool::Create(int64_t{1} << 20);
  {
    PooledBytes a = pool->Allocate(int64_t{768} << 10);
    PooledBytes b = pool->Allocate(int64_t{768} << 10);
  }
  EXPECT_LE(pool->cached_bytes(), int64_t{1} << 20);
  EXPECT_GT(pool->cached_bytes(), 0);
  pool->Trim();
  EXPECT_EQ(pool->cached_bytes(), 0);
}

TEST(HostMemoryPoolTest, BlocksMayOutliveTheirOwnerHandle) {
  auto pool = HostMemoryPool::Create(int64_t{64} << 20);
  PooledBytes block = pool->Allocate(int64_t{1} << 20);
  pool.reset();  // the block keeps the pool alive until it is released
  ASSERT_NE(block, nullptr);
  std::memset(block.get(), 1, size_t{1} << 20);
}

TEST(HostMemoryPoolTest, RejectsNegativeAndAbsurdSizes) {
  auto pool = HostMemoryPool::Create(int64_t{64} << 20);
  EXPECT_EQ(pool->Allocate(-1), nullptr);
  EXPECT_EQ(pool->Allocate(INT64_MAX), nullptr);
}

}  // namespace
}  // namespace kiln::cpu
