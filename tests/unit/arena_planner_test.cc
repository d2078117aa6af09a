// The arena planner (core/compiler/arena_planner.h): arrays live at once
// never share bytes, arrays live at different times do.
#include "core/compiler/arena_planner.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace kiln::compiler {
namespace {

bool Disjoint(int64_t a, int64_t a_bytes, int64_t b, int64_t b_bytes) {
  return a + a_bytes <= b || b + b_bytes <= a;
}

TEST(ArenaPlannerTest, ArraysLiveAtOnceDoNotOverlap) {
  const std::vector<BufferInterval> intervals = {{100, 0, 2}, {200, 1, 3}, {64, 2, 2}};
  const ArenaPlan plan = PlanArena(intervals);
  ASSERT_EQ(plan.offsets.size(), 3u);
  for (size_t i = 0; i < intervals.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % 64, 0);
    for (size_t j = i + 1; j < intervals.size(); ++j) {
      EXPECT_TRUE(Disjoint(plan.offsets[i], intervals[i].bytes, plan.offsets[j], intervals[j].bytes))
          << i << "," << j;
    }
  }
  EXPECT_EQ(plan.total_bytes, 128 + 256 + 64);
}

TEST(ArenaPlannerTest, ArraysLiveAtDifferentTimesShareBytes) {
  // A chain: each array dies when the next is made, as in x -> y -> z.
  const std::vector<BufferInterval> intervals = {{1024, 0, 1}, {1024, 1, 2}, {1024, 2, 3}};
  const ArenaPlan plan = PlanArena(intervals);
  EXPECT_EQ(plan.total_bytes, 2048);
  EXPECT_EQ(plan.offsets[0], plan.offsets[2]);
  EXPECT_NE(plan.offsets[0], plan.offsets[1]);
}

TEST(ArenaPlannerTest, SmallArrayFitsInAGapBetweenBigOnes) {
  const std::vector<BufferInterval> intervals = {{256, 0, 4}, {256, 0, 1}, {512, 0, 4}, {128, 3, 4}};
  const ArenaPlan plan = PlanArena(intervals);
  EXPECT_EQ(plan.total_bytes, 1024);
  EXPECT_EQ(plan.offsets[3], plan.offsets[1]);  // reuses the dead 256-byte array's place
}

// Beyond kMaxIntervalsPlacedBySize arrays the planner places them in time
// order (best fit), which must keep arrays that live at once apart and still
// reuse the bytes of dead ones.
TEST(ArenaPlannerTest, ManyArraysLiveAtOnceDoNotOverlap) {
  std::vector<BufferInterval> intervals;
  uint64_t state = 12345;
  auto next = [&](int64_t bound) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(bound));
  };
  for (size_t i = 0; i < kMaxIntervalsPlacedBySize + 1000; ++i) {
    const int64_t first = next(20000);
    intervals.push_back({1 + next(4096), first, first + next(200)});
  }
  const ArenaPlan plan = PlanArena(intervals);
  ASSERT_EQ(plan.offsets.size(), intervals.size());
  for (size_t i = 0; i < intervals.size(); ++i) {
    ASSERT_EQ(plan.offsets[i] % 64, 0);
    ASSERT_LE(plan.offsets[i] + intervals[i].bytes, plan.total_bytes);
    for (size_t j = i + 1; j < intervals.size(); ++j) {
      const bool live_together = intervals[i].first_step <= intervals[j].last_step &&
                                 intervals[j].first_step <= intervals[i].last_step;
      if (live_together) {
        ASSERT_TRUE(Disjoint(plan.offsets[i], intervals[i].bytes, plan.offsets[j], intervals[j].bytes))
            << i << "," << j;
      }
    }
  }
}

TEST(ArenaPlannerTest, ALongChainReusesTwoArraysOfBytes) {
  std::vector<BufferInterval> intervals;
  for (int64_t step = 0; step < 3 * static_cast<int64_t>(kMaxIntervalsPlacedBySize); ++step) {
    intervals.push_back({1000, step, step + 1});
  }
  const ArenaPlan plan = PlanArena(intervals);
  EXPECT_EQ(plan.total_bytes, 2 * 1024);
  EXPECT_EQ(plan.offsets[0], plan.offsets[2]);
  EXPECT_NE(plan.offsets[0], plan.offsets[1]);
}

}  // namespace
}  // namespace kiln::compiler
