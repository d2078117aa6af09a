// The vulkan backend's cache of device memory without a device: size classes
// and the bounded idle pool.
#include <cstdint>
#include <optional>

#include <gtest/gtest.h>

#include "backends/vulkan/vulkan_memory_cache.h"

namespace kiln::vulkan {
namespace {

TEST(MemoryCacheTest, SizeClassesCoverTheRequestWithBoundedSlack) {
  constexpr uint64_t kNoLimit = UINT64_MAX;
  for (uint64_t bytes = 0; bytes < (uint64_t{1} << 22); bytes = bytes * 3 / 2 + 1) {
    const uint64_t size_class = AllocationClass(bytes, kNoLimit);
    SCOPED_TRACE(bytes);
    EXPECT_GE(size_class, bytes);
    EXPECT_GE(size_class, 4u);
    EXPECT_EQ(size_class % 4, 0u);
    EXPECT_LE(size_class, bytes + bytes / 4 + 256) << "at most a quarter (or 256 bytes) more";
    EXPECT_EQ(AllocationClass(size_class, kNoLimit), size_class) << "a class is its own class";
  }
  EXPECT_EQ(AllocationClass(0, kNoLimit), 256u);
  EXPECT_EQ(AllocationClass(1000, kNoLimit), AllocationClass(1010, kNoLimit));
  // Never past the device's largest buffer, unless the request itself is.
  EXPECT_EQ(AllocationClass(1000, 1000), 1000u);
  EXPECT_EQ(AllocationClass(100, 64), 100u);
  EXPECT_EQ(AllocationClass((uint64_t{3} << 30) + 5, uint64_t{13} << 28), uint64_t{13} << 28);
}

Allocation Fake(uint64_t id, uint64_t bytes) {
  Allocation allocation;
  allocation.buffer = reinterpret_cast<VkBuffer>(id);
  allocation.memory = reinterpret_cast<VkDeviceMemory>(id + 1000);
  allocation.bytes = bytes;
  return allocation;
}

TEST(MemoryCacheTest, KeepsIdleMemoryUpToItsCapacityByKindAndClass) {
  MemoryCache cache(4096);
  EXPECT_FALSE(cache.Take(BufferKind::kStorage, 1024).has_value());
  EXPECT_TRUE(cache.Keep(BufferKind::kStorage, Fake(1, 1024)));
  EXPECT_TRUE(cache.Keep(BufferKind::kStaging, Fake(2, 1024)));
  EXPECT_TRUE(cache.Keep(BufferKind::kStorage, Fake(3, 2048)));
  EXPECT_EQ(cache.idle_bytes(), 4096u);
  EXPECT_FALSE(cache.Keep(BufferKind::kStorage, Fake(4, 256))) << "past the capacity: the caller frees it";
  EXPECT_FALSE(cache.Keep(BufferKind::kStorage, Fake(5, 8192)));

  std::optional<Allocation> storage = cache.Take(BufferKind::kStorage, 1024);
  ASSERT_TRUE(storage.has_value());
  EXPECT_EQ(storage->buffer, reinterpret_cast<VkBuffer>(1));
  EXPECT_FALSE(cache.Take(BufferKind::kStorage, 1024).has_value()) << "taken once";
  EXPECT_FALSE(cache.Take(BufferKind::kStorage, 1280).has_value()) << "only the exact class";
  EXPECT_EQ(cache.idle_bytes(), 3072u);

  const std::vector<Allocation> all = cache.TakeAll();
  EXPECT_EQ(all.size(), 2u);
  EXPECT_EQ(cache.idle_bytes(), 0u);
  EXPECT_FALSE(cache.Take(BufferKind::kStaging, 1024).has_value());
}

}  // namespace
}  // namespace kiln::vulkan
