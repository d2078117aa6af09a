#include "backends/cpu/program_buffers.h"

#include "core/compiler/buffer_assignment.h"

namespace kiln::cpu {

void AssignBuffers(CompiledProgram& program) {
  compiler::BufferAssignmentProblem problem;
  problem.buffers.reserve(program.slots.size());
  for (const Slot& slot : program.slots)
    problem.buffers.push_back({slot.bytes, slot.kind == SlotKind::kArena, slot.region, slot.backing});
  problem.regions.reserve(program.sequences.size());
  for (const ThunkSequence& sequence : program.sequences) {
    std::vector<compiler::AssignmentStep>& steps = problem.regions.emplace_back();
    steps.reserve(sequence.thunks.size());
    for (const auto& thunk : sequence.thunks) {
      compiler::AssignmentStep& step = steps.emplace_back();
      step.inputs.assign(thunk->inputs().begin(), thunk->inputs().end());
      step.outputs.assign(thunk->outputs().begin(), thunk->outputs().end());
      step.updates_first_input = thunk->kind() == "dynamic-update-slice";
    }
  }
  problem.region_results = program.region_results;
  problem.entry_results = program.result_sources;
  problem.alignment = 64;
  const compiler::BufferAssignment assignment = compiler::AssignBuffers(problem);
  program.arena_bytes = assignment.arena_bytes;
  program.statistics.in_place_updates += assignment.in_place_updates;
  program.statistics.arena_bytes_without_reuse += assignment.arena_bytes_without_reuse;
  for (size_t s = 0; s < program.slots.size(); ++s) {
    Slot& slot = program.slots[s];
    if (slot.kind != SlotKind::kArena) continue;
    if (assignment.result[s] >= 0) {
      slot.kind = SlotKind::kResult;
      slot.index = assignment.result[s];
    } else {
      slot.index = assignment.offset[s];
    }
  }
  for (const ThunkSequence& sequence : program.sequences) {
    for (const auto& thunk : sequence.thunks) ++program.statistics.thunks[std::string(thunk->kind())];
  }
}

}  // namespace kiln::cpu
