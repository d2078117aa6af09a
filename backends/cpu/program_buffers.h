// The CPU program's buffers assigned by the shared buffer assignment
// (core/compiler/buffer_assignment.h): each thunk sequence is a region,
// each thunk a step reading its inputs and writing its outputs (a
// dynamic-update-slice thunk may update its operand in place), and the
// arena slots are placed in one arena.
#pragma once

#include "backends/cpu/program.h"

namespace kiln::cpu {

// Fills the slots' kinds and indexes, arena_bytes and the statistics.
void AssignBuffers(CompiledProgram& program);

}  // namespace kiln::cpu
