// Buffer assignment of a lowered program: lifetimes of the temporaries from
// the thunks that write and read them, in-place dynamic-update-slice when
// the operand dies there, result arrays written straight into the result
// buffers, and arena offsets shared by arrays that are never live together.
#pragma once

#include "backends/cpu/program.h"

namespace kiln::cpu {

// Fills the slots' kinds and indexes, arena_bytes and the statistics.
void AssignBuffers(CompiledProgram& program);

}  // namespace kiln::cpu
