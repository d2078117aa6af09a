// Buffer assignment, backend-neutral: a lowered program seen as regions of
// steps (a loop body's or branch's sequence is a region of its own) that
// read and write numbered buffers. From the steps it finds each buffer's
// lifetime, lets a dynamic-update-slice write its result over its operand
// when the operand dies there, writes entry results straight into the
// caller's buffers, and places the rest in one arena where buffers that
// are never live together share bytes (arena_planner.h). The CPU backend
// (backends/cpu/program_buffers.h) and the device lowering
// (core/lowering/step_lowering.cc) each describe their program this way.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::compiler {

struct AssignmentBuffer {
  int64_t bytes = 0;
  // Whether the arena holds it (a temporary); parameters, constants and
  // the like are only read here.
  bool in_arena = true;
  int region = 0;  // the region whose steps measure its lifetime
  // A buffer that is a view of others (a loop's bound state): using it
  // uses them.
  std::vector<int> backing;
};

struct AssignmentStep {
  std::vector<int> inputs;
  std::vector<int> outputs;
  // A dynamic-update-slice: outputs[0] may be inputs[0]'s bytes, updated
  // in place, when inputs[0] is read for the last time here and not as
  // another input.
  bool updates_first_input = false;
};

struct BufferAssignmentProblem {
  std::vector<AssignmentBuffer> buffers;
  std::vector<std::vector<AssignmentStep>> regions;
  // Per region: buffers read after its last step (its results).
  std::vector<std::vector<int>> region_results;
  // Per entry result leaf: the buffer holding it. One of region 0's arena
  // buffers named once here is written into the caller's result buffer.
  std::vector<int> entry_results;
  int64_t alignment = 64;
};

struct BufferAssignment {
  // Per buffer: the entry result it is written into, or -1.
  std::vector<int64_t> result;
  // Per buffer: its arena offset (in_arena buffers not written into a
  // result), or -1.
  std::vector<int64_t> offset;
  int64_t arena_bytes = 0;
  int64_t arena_bytes_without_reuse = 0;  // every arena buffer, aligned, side by side
  int64_t in_place_updates = 0;
};

BufferAssignment AssignBuffers(const BufferAssignmentProblem& problem);

}  // namespace kiln::compiler
