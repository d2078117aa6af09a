#include "backends/cpu/buffer_assignment.h"

#include <algorithm>
#include <climits>
#include <numeric>

#include "core/compiler/arena_planner.h"

namespace kiln::cpu {
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

void AssignBuffers(CompiledProgram& program) {
  std::vector<Slot>& slots = program.slots;
  const size_t count = slots.size();
  std::vector<int64_t> first(count, INT64_MAX), last(count, -1);
  auto use = [&](int slot, int64_t step) {
    auto s = static_cast<size_t>(slot);
    last[s] = std::max(last[s], step);
    for (int backing : slots[s].backing)
      last[static_cast<size_t>(backing)] = std::max(last[static_cast<size_t>(backing)], step);
  };
  for (size_t region = 0; region < program.sequences.size(); ++region) {
    const auto& thunks = program.sequences[region].thunks;
    for (size_t step = 0; step < thunks.size(); ++step) {
      const auto t = static_cast<int64_t>(step);
      for (int output : thunks[step]->outputs()) {
        first[static_cast<size_t>(output)] = std::min(first[static_cast<size_t>(output)], t);
        use(output, t);
      }
      for (int input : thunks[step]->inputs()) use(input, t);
    }
    for (int result : program.region_results[region]) use(result, static_cast<int64_t>(thunks.size()));
  }
  for (size_t s = 0; s < count; ++s) {
    if (first[s] == INT64_MAX) first[s] = 0;
    last[s] = std::max(last[s], first[s]);
  }

  // In-place dynamic-update-slice: the result takes the operand's buffer when
  // the operand (with everything already sharing its buffer) is last read there.
  Groups groups(count);
  std::vector<int64_t> group_first = first, group_last = last;
  for (size_t region = 0; region < program.sequences.size(); ++region) {
    const auto& thunks = program.sequences[region].thunks;
    for (size_t step = 0; step < thunks.size(); ++step) {
      const Thunk& thunk = *thunks[step];
      if (thunk.kind() != "dynamic-update-slice") continue;
      const int operand = thunk.inputs()[0];
      const int result = thunk.outputs()[0];
      const auto& o = slots[static_cast<size_t>(operand)];
      const auto& r = slots[static_cast<size_t>(result)];
      if (o.kind != SlotKind::kArena || r.kind != SlotKind::kArena || o.region != r.region) continue;
      const int group = groups.Find(operand);
      if (group_last[static_cast<size_t>(group)] != static_cast<int64_t>(step)) continue;
      bool read_again = false;
      for (size_t i = 1; i < thunk.inputs().size(); ++i)
        read_again |= groups.Find(thunk.inputs()[i]) == group;
      if (read_again) continue;
      const int result_group = groups.Find(result);
      group_first[static_cast<size_t>(group)] =
          std::min(group_first[static_cast<size_t>(group)], group_first[static_cast<size_t>(result_group)]);
      group_last[static_cast<size_t>(group)] =
          std::max(group_last[static_cast<size_t>(group)], group_last[static_cast<size_t>(result_group)]);
      groups.Merge(group, result);
      ++program.statistics.in_place_updates;
    }
  }

  // Entry results computed by a thunk are written straight into the result
  // buffer, unless the same array is returned twice.
  std::vector<int64_t> result_of_group(count, -1);
  for (size_t r = 0; r < program.result_sources.size(); ++r) {
    const int source = program.result_sources[r];
    const Slot& slot = slots[static_cast<size_t>(source)];
    if (slot.kind != SlotKind::kArena || slot.region != 0) continue;
    const auto group = static_cast<size_t>(groups.Find(source));
    result_of_group[group] = result_of_group[group] == -1 ? static_cast<int64_t>(r) : -2;
  }

  // Arena: one region after another; inside a region, by liveness. Each
  // group's owner slot is listed under its region once (not every slot
  // looked at per region: a module may have thousands of regions).
  std::vector<std::vector<size_t>> owners_of_region(program.sequences.size());
  for (size_t s = 0; s < count; ++s) {
    if (slots[s].kind != SlotKind::kArena || static_cast<size_t>(slots[s].region) >= owners_of_region.size())
      continue;
    if (static_cast<size_t>(groups.Find(static_cast<int>(s))) != s || result_of_group[s] >= 0) continue;
    owners_of_region[static_cast<size_t>(slots[s].region)].push_back(s);
  }
  int64_t base = 0;
  std::vector<int64_t> offset_of_group(count, -1);
  for (const std::vector<size_t>& owners : owners_of_region) {
    std::vector<compiler::BufferInterval> intervals;
    for (size_t s : owners) {
      intervals.push_back({slots[s].bytes, group_first[s], group_last[s]});
      program.statistics.arena_bytes_without_reuse += (slots[s].bytes + 63) / 64 * 64;
    }
    const compiler::ArenaPlan plan = compiler::PlanArena(intervals);
    for (size_t i = 0; i < owners.size(); ++i) offset_of_group[owners[i]] = base + plan.offsets[i];
    base += plan.total_bytes;
  }
  program.arena_bytes = base;

  for (size_t s = 0; s < count; ++s) {
    Slot& slot = slots[s];
    if (slot.kind != SlotKind::kArena) continue;
    const auto group = static_cast<size_t>(groups.Find(static_cast<int>(s)));
    if (result_of_group[group] >= 0) {
      slot.kind = SlotKind::kResult;
      slot.index = result_of_group[group];
    } else {
      slot.index = offset_of_group[group];
    }
  }
  for (const ThunkSequence& sequence : program.sequences) {
    for (const auto& thunk : sequence.thunks) ++program.statistics.thunks[std::string(thunk->kind())];
  }
}

}  // namespace kiln::cpu
