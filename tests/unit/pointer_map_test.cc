// PointerMap and PointerSet (core/pointer_map.h), the flat tables of the
// compile-time walks: every key added is found with its value, across growth
// far past the reserved size; a key added twice keeps its first value; the
// null pointer is never a key.
#include "core/pointer_map.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kiln {
namespace {

TEST(PointerMapTest, FindsEveryKeyWithItsValueAfterGrowing) {
  constexpr size_t kKeys = 10000;
  std::vector<std::unique_ptr<int>> keys;
  for (size_t i = 0; i < kKeys; ++i) keys.push_back(std::make_unique<int>(static_cast<int>(i)));
  PointerMap<std::string> map(4);  // reserved far below what is added: it grows many times
  for (size_t i = 0; i < kKeys; ++i) {
    const auto [value, added] = map.Insert(keys[i].get(), std::to_string(i));
    ASSERT_TRUE(added) << i;
    ASSERT_EQ(*value, std::to_string(i));
  }
  EXPECT_EQ(map.size(), kKeys);
  for (size_t i = 0; i < kKeys; ++i) {
    const std::string* value = map.Find(keys[i].get());
    ASSERT_NE(value, nullptr) << i;
    EXPECT_EQ(*value, std::to_string(i));
  }
  const int absent = 0;
  EXPECT_EQ(map.Find(&absent), nullptr);
  EXPECT_FALSE(map.Contains(&absent));
}

TEST(PointerMapTest, KeepsTheFirstValueOfAKeyAddedTwice) {
  int key = 0;
  PointerMap<int> map;
  EXPECT_TRUE(map.Insert(&key, 1).second);
  const auto [value, added] = map.Insert(&key, 2);
  EXPECT_FALSE(added);
  EXPECT_EQ(*value, 1);
  *map.Find(&key) = 3;  // the stored value can be changed in place
  EXPECT_EQ(*map.Find(&key), 3);
  EXPECT_EQ(map.size(), 1u);
}

TEST(PointerMapTest, NullIsNeverAKey) {
  PointerMap<int> map;
  EXPECT_EQ(map.Find(nullptr), nullptr);  // empty table
  const auto [value, added] = map.Insert(nullptr, 1);
  EXPECT_EQ(value, nullptr);
  EXPECT_FALSE(added);
  EXPECT_TRUE(map.empty());
  int key = 0;
  map.Insert(&key, 1);
  EXPECT_FALSE(map.Contains(nullptr));
}

TEST(PointerSetTest, AddsEachPointerOnce) {
  std::vector<int> values(1000);
  PointerSet set;
  for (const int& value : values) EXPECT_TRUE(set.Insert(&value));
  for (const int& value : values) EXPECT_FALSE(set.Insert(&value));
  EXPECT_EQ(set.size(), values.size());
  for (const int& value : values) EXPECT_TRUE(set.Contains(&value));
  EXPECT_FALSE(set.Insert(nullptr));
  EXPECT_FALSE(set.Contains(nullptr));
}

}  // namespace
}  // namespace kiln
