#include "core/compiler/arena_planner.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <queue>
#include <set>
#include <utility>

namespace kiln::compiler {
namespace {

int64_t RoundUp(int64_t value, int64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

int64_t PlacedBytes(const BufferInterval& interval, int64_t alignment) {
  return RoundUp(std::max<int64_t>(interval.bytes, 1), alignment);
}

bool Overlap(const BufferInterval& a, const BufferInterval& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

// Biggest first, each at the lowest offset no placed array with an
// overlapping lifetime occupies. Each placement looks at every placed array.
ArenaPlan PlanBySize(std::span<const BufferInterval> intervals, int64_t alignment) {
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
    const int64_t size = PlacedBytes(interval, alignment);
    busy.clear();
    for (size_t other : placed) {
      if (Overlap(interval, intervals[other])) {
        busy.push_back({plan.offsets[other], plan.offsets[other] + PlacedBytes(intervals[other], alignment)});
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

// Free bytes of the arena below its current top, as blocks that never touch
// (freeing merges neighbours), found by offset and by size.
class FreeBlocks {
 public:
  // The offset of `size` bytes: the smallest free block that holds them
  // (lowest offset among equals), else the top of the arena, grown.
  int64_t Allocate(int64_t size, int64_t& top) {
    const auto fit = by_size_.lower_bound({size, 0});
    if (fit != by_size_.end()) {
      const auto [block_size, offset] = *fit;
      Remove(offset, block_size);
      if (block_size > size) Insert(offset + size, block_size - size);
      return offset;
    }
    // A free block that ends at the top is extended rather than left behind.
    int64_t offset = top;
    if (!by_offset_.empty()) {
      const auto last = std::prev(by_offset_.end());
      if (last->first + last->second == top) {
        offset = last->first;
        Remove(last->first, last->second);
      }
    }
    top = offset + size;
    return offset;
  }

  void Free(int64_t offset, int64_t size) {
    const auto next = by_offset_.find(offset + size);
    if (next != by_offset_.end()) {
      size += next->second;
      Remove(next->first, next->second);
    }
    const auto after = by_offset_.lower_bound(offset);
    if (after != by_offset_.begin()) {
      const auto previous = std::prev(after);
      if (previous->first + previous->second == offset) {
        offset = previous->first;
        size += previous->second;
        Remove(previous->first, previous->second);
      }
    }
    Insert(offset, size);
  }

 private:
  void Insert(int64_t offset, int64_t size) {
    by_offset_.emplace(offset, size);
    by_size_.insert({size, offset});
  }
  void Remove(int64_t offset, int64_t size) {
    by_offset_.erase(offset);
    by_size_.erase({size, offset});
  }

  std::map<int64_t, int64_t> by_offset_;           // offset -> size
  std::set<std::pair<int64_t, int64_t>> by_size_;  // (size, offset)
};

// In the order the arrays are written, each in the smallest free block that
// holds it, as an allocator would at run time; an array's bytes are free
// again after its last step. O(n log n).
ArenaPlan PlanByTime(std::span<const BufferInterval> intervals, int64_t alignment) {
  ArenaPlan plan;
  plan.offsets.assign(intervals.size(), 0);
  std::vector<size_t> order(intervals.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Ties keep their index order; a plain sort with the index as second key
  // does that without std::stable_sort, whose temporary buffer libstdc++ 12
  // takes through a function that Clang flags as deprecated.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::pair(intervals[a].first_step, a) < std::pair(intervals[b].first_step, b);
  });
  using Live = std::pair<int64_t, size_t>;  // last step, interval
  std::priority_queue<Live, std::vector<Live>, std::greater<>> live;
  FreeBlocks free;
  int64_t top = 0;
  for (size_t index : order) {
    const BufferInterval& interval = intervals[index];
    // Lifetimes are inclusive: an array last read at this step is still live.
    while (!live.empty() && live.top().first < interval.first_step) {
      const size_t done = live.top().second;
      live.pop();
      free.Free(plan.offsets[done], PlacedBytes(intervals[done], alignment));
    }
    plan.offsets[index] = free.Allocate(PlacedBytes(interval, alignment), top);
    live.push({interval.last_step, index});
  }
  plan.total_bytes = top;
  return plan;
}

}  // namespace

ArenaPlan PlanArena(std::span<const BufferInterval> intervals, int64_t alignment) {
  if (intervals.size() <= kMaxIntervalsPlacedBySize) return PlanBySize(intervals, alignment);
  return PlanByTime(intervals, alignment);
}

}  // namespace kiln::compiler
