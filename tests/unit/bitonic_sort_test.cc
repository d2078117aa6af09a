// The bitonic pass schedule the GPU sort kernels follow, played on the host
// exactly as the kernels apply it (tiles in shared memory, wider distances
// as passes of their own): every row length and tile sorts every input.
#include "core/lowering/bitonic_sort.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace kiln {
namespace {

// Element i against i ^ stride, ascending where (i & block) == 0.
void CompareExchangeAt(std::vector<int64_t>& row, int64_t block, int64_t stride) {
  for (int64_t i = 0; i < static_cast<int64_t>(row.size()); ++i) {
    const int64_t partner = i ^ stride;
    if (partner <= i) continue;
    const bool ascending = (i & block) == 0;
    if ((row[i] > row[partner]) == ascending) std::swap(row[i], row[partner]);
  }
}

void ApplyPass(std::vector<int64_t>& row, const BitonicPass& pass, int64_t tile) {
  switch (pass.kind) {
    case BitonicPass::Kind::kSortTiles:
      for (int64_t block = 2; block <= tile; block *= 2)
        for (int64_t stride = block / 2; stride >= 1; stride /= 2) CompareExchangeAt(row, block, stride);
      break;
    case BitonicPass::Kind::kMergeAcrossTiles: CompareExchangeAt(row, pass.block, pass.stride); break;
    case BitonicPass::Kind::kMergeWithinTiles:
      for (int64_t stride = tile / 2; stride >= 1; stride /= 2) CompareExchangeAt(row, pass.block, stride);
      break;
  }
}

TEST(BitonicSortTest, PaddedLengthIsTheNextPowerOfTwo) {
  EXPECT_EQ(BitonicPaddedLength(0), 1);
  EXPECT_EQ(BitonicPaddedLength(1), 1);
  EXPECT_EQ(BitonicPaddedLength(2), 2);
  EXPECT_EQ(BitonicPaddedLength(3), 4);
  EXPECT_EQ(BitonicPaddedLength(1024), 1024);
  EXPECT_EQ(BitonicPaddedLength(1025), 2048);
  EXPECT_EQ(BitonicPaddedLength((int64_t{1} << 20) + 1), int64_t{1} << 21);
}

TEST(BitonicSortTest, PassesSortEveryLengthAndTile) {
  std::mt19937_64 random(7);
  const int64_t kPadding = std::numeric_limits<int64_t>::max();
  for (int64_t tile : {2, 4, 8, 64}) {
    for (int64_t length : {1, 2, 3, 5, 8, 13, 64, 65, 100, 257, 1000}) {
      const int64_t padded = BitonicPaddedLength(length);
      const std::vector<BitonicPass> passes = BitonicSortPasses(padded, tile);
      const int64_t used_tile = BitonicTile(padded, tile);
      for (int trial = 0; trial < 3; ++trial) {
        std::vector<int64_t> row(padded, kPadding);
        // Few distinct values, so equal keys meet.
        for (int64_t i = 0; i < length; ++i) row[i] = static_cast<int64_t>(random() % 17) - 8;
        std::vector<int64_t> expected = row;
        std::sort(expected.begin(), expected.end());
        for (const BitonicPass& pass : passes) ApplyPass(row, pass, used_tile);
        EXPECT_EQ(row, expected) << "length " << length << ", tile " << tile;
      }
    }
  }
}

TEST(BitonicSortTest, OnlyDistancesOfATileOrMoreArePassesOfTheirOwn) {
  // 2^20 elements in tiles of 2^11: one tile sort, then merges of 2^12 .. 2^20,
  // each with its distances >= 2^11 across tiles and one pass within them.
  const std::vector<BitonicPass> passes = BitonicSortPasses(int64_t{1} << 20, int64_t{1} << 11);
  int64_t across = 0, within = 0;
  for (const BitonicPass& pass : passes) {
    if (pass.kind == BitonicPass::Kind::kMergeAcrossTiles) {
      ++across;
      EXPECT_GE(pass.stride, int64_t{1} << 11);
      EXPECT_LT(pass.stride, pass.block);
    }
    if (pass.kind == BitonicPass::Kind::kMergeWithinTiles) ++within;
  }
  EXPECT_EQ(passes.front().kind, BitonicPass::Kind::kSortTiles);
  EXPECT_EQ(within, 9);
  EXPECT_EQ(across, 45);  // 1 + 2 + ... + 9
  // A row within one tile is one pass.
  const std::vector<BitonicPass> short_row = BitonicSortPasses(256, 2048);
  ASSERT_EQ(short_row.size(), 1u);
  EXPECT_EQ(short_row[0].block, 256);
  EXPECT_TRUE(BitonicSortPasses(1, 2048).empty());
}

}  // namespace
}  // namespace kiln
