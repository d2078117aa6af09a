#include "core/compiler/buffer_assignment.h"

#include <algorithm>
#include <climits>
#include <numeric>

#include "core/compiler/arena_planner.h"

namespace kiln::compiler {
namespace {

class Groups {
 public:
  explicit Groups(size_t count) : parent_(count) { std::iota(parent_.begin(), parent_.end(), 0); }
  int Find(int slot) {
    while (parent_[static_cast<size_t>(slot)] != slot) {
      parent_[static_cast<size_t>(slot)] = parent_[static_cast<size_t>(parent_[static_cast<size_t>(slot)])];
      slot = parent_[static_cast<size_t>(slot)];
    }
    return slot;
  }
  // Makes `root` the group of `other`'s group.
  void Merge(int root, int other) { parent_[static_cast<size_t>(Find(other))] = Find(root); }

 private:
  std::vector<int> parent_;
};

}  // namespace

BufferAssignment AssignBuffers(const BufferAssignmentProblem& problem) {
  const std::vector<AssignmentBuffer>& buffers = problem.buffers;
  const size_t count = buffers.size();
  BufferAssignment assignment;
  std::vector<int64_t> first(count, INT64_MAX), last(count, -1);
  auto use = [&](int buffer, int64_t step) {
    auto b = static_cast<size_t>(buffer);
    last[b] = std::max(last[b], step);
    for (int backing : buffers[b].backing)
      last[static_cast<size_t>(backing)] = std::max(last[static_cast<size_t>(backing)], step);
  };
  for (size_t region = 0; region < problem.regions.size(); ++region) {
    const std::vector<AssignmentStep>& steps = problem.regions[region];
    for (size_t step = 0; step < steps.size(); ++step) {
      const auto t = static_cast<int64_t>(step);
      for (int output : steps[step].outputs) {
        first[static_cast<size_t>(output)] = std::min(first[static_cast<size_t>(output)], t);
        use(output, t);
      }
      for (int input : steps[step].inputs) use(input, t);
    }
    if (region < problem.region_results.size()) {
      for (int result : problem.region_results[region]) use(result, static_cast<int64_t>(steps.size()));
    }
  }
  for (size_t b = 0; b < count; ++b) {
    if (first[b] == INT64_MAX) first[b] = 0;
    last[b] = std::max(last[b], first[b]);
  }

  // In-place dynamic-update-slice: the result takes the operand's bytes
  // when the operand (with everything already sharing its bytes) is last
  // read there.
  Groups groups(count);
  std::vector<int64_t> group_first = first, group_last = last;
  for (const std::vector<AssignmentStep>& steps : problem.regions) {
    for (size_t step = 0; step < steps.size(); ++step) {
      const AssignmentStep& update = steps[step];
      if (!update.updates_first_input || update.inputs.empty() || update.outputs.empty()) continue;
      const int operand = update.inputs[0];
      const int result = update.outputs[0];
      const AssignmentBuffer& o = buffers[static_cast<size_t>(operand)];
      const AssignmentBuffer& r = buffers[static_cast<size_t>(result)];
      if (!o.in_arena || !r.in_arena || o.region != r.region) continue;
      const int group = groups.Find(operand);
      if (group_last[static_cast<size_t>(group)] != static_cast<int64_t>(step)) continue;
      bool read_again = false;
      for (size_t i = 1; i < update.inputs.size(); ++i) read_again |= groups.Find(update.inputs[i]) == group;
      if (read_again) continue;
      const int result_group = groups.Find(result);
      group_first[static_cast<size_t>(group)] =
          std::min(group_first[static_cast<size_t>(group)], group_first[static_cast<size_t>(result_group)]);
      group_last[static_cast<size_t>(group)] =
          std::max(group_last[static_cast<size_t>(group)], group_last[static_cast<size_t>(result_group)]);
      groups.Merge(group, result);
      ++assignment.in_place_updates;
    }
  }

  // Entry results computed by a step are written straight into the result
  // buffer, unless the same array is returned twice.
  std::vector<int64_t> result_of_group(count, -1);
  for (size_t r = 0; r < problem.entry_results.size(); ++r) {
    const int source = problem.entry_results[r];
    const AssignmentBuffer& buffer = buffers[static_cast<size_t>(source)];
    if (!buffer.in_arena || buffer.region != 0) continue;
    const auto group = static_cast<size_t>(groups.Find(source));
    result_of_group[group] = result_of_group[group] == -1 ? static_cast<int64_t>(r) : -2;
  }

  // Arena: one region after another; inside a region, by liveness. Each
  // group's owner is listed under its region once (not every buffer looked
  // at per region: a module may have thousands of regions).
  std::vector<std::vector<size_t>> owners_of_region(problem.regions.size());
  for (size_t b = 0; b < count; ++b) {
    if (!buffers[b].in_arena || buffers[b].region < 0 ||
        static_cast<size_t>(buffers[b].region) >= owners_of_region.size())
      continue;
    if (static_cast<size_t>(groups.Find(static_cast<int>(b))) != b || result_of_group[b] >= 0) continue;
    owners_of_region[static_cast<size_t>(buffers[b].region)].push_back(b);
  }
  const int64_t alignment = std::max<int64_t>(1, problem.alignment);
  int64_t base = 0;
  std::vector<int64_t> offset_of_group(count, -1);
  for (const std::vector<size_t>& owners : owners_of_region) {
    std::vector<BufferInterval> intervals;
    for (size_t b : owners) {
      intervals.push_back({buffers[b].bytes, group_first[b], group_last[b]});
      assignment.arena_bytes_without_reuse += (buffers[b].bytes + alignment - 1) / alignment * alignment;
    }
    const ArenaPlan plan = PlanArena(intervals, alignment);
    for (size_t i = 0; i < owners.size(); ++i) offset_of_group[owners[i]] = base + plan.offsets[i];
    base += plan.total_bytes;
  }
  assignment.arena_bytes = base;

  assignment.result.assign(count, -1);
  assignment.offset.assign(count, -1);
  for (size_t b = 0; b < count; ++b) {
    if (!buffers[b].in_arena) continue;
    const auto group = static_cast<size_t>(groups.Find(static_cast<int>(b)));
    if (result_of_group[group] >= 0) {
      assignment.result[b] = result_of_group[group];
    } else {
      assignment.offset[b] = offset_of_group[group];
    }
  }
  return assignment;
}

}  // namespace kiln::compiler
