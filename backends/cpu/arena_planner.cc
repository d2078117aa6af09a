#include "backends/cpu/arena_planner.h"

#include <algorithm>
#include <numeric>

namespace kiln::cpu {
namespace {

int64_t RoundUp(int64_t value, int64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

bool Overlap(const BufferInterval& a, const BufferInterval& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

}  // namespace

ArenaPlan PlanArena(std::span<const BufferInterval> intervals, int64_t alignment) {
  ArenaPlan plan;
  plan.offsets.assign(intervals.size(), 0);
  std::vector<size_t> order(intervals.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Biggest first, then earliest, then by index so the plan is deterministic.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (intervals[a].bytes != intervals[b].bytes) return intervals[a].bytes > intervals[b].bytes;
    if (intervals[a].first_step != intervals[b].first_step)
      return intervals[a].first_step < intervals[b].first_step;
    return a < b;
  });
  std::vector<size_t> placed;
  struct Range {
    int64_t begin, end;
  };
  std::vector<Range> busy;
  for (size_t index : order) {
    const BufferInterval& interval = intervals[index];
    const int64_t size = RoundUp(std::max<int64_t>(interval.bytes, 1), alignment);
    busy.clear();
    for (size_t other : placed) {
      if (Overlap(interval, intervals[other])) {
        busy.push_back(
            {plan.offsets[other],
             plan.offsets[other] + RoundUp(std::max<int64_t>(intervals[other].bytes, 1), alignment)});
      }
    }
    std::sort(busy.begin(), busy.end(), [](const Range& a, const Range& b) { return a.begin < b.begin; });
    int64_t offset = 0;
    for (const Range& range : busy) {
      if (range.begin >= offset + size) break;  // the gap before this range fits
      offset = std::max(offset, range.end);
    }
    plan.offsets[index] = offset;
    plan.total_bytes = std::max(plan.total_bytes, offset + size);
    placed.push_back(index);
  }
  return plan;
}

}  // namespace kiln::cpu
