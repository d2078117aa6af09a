// Per-thunk timing for performance work: with the environment variable
// KILN_CPU_PROFILE set, every thunk run is timed and, when the process exits,
// a table of the thunks that took longest (kind, output slots, runs, total
// and mean time) is printed on stderr. Off, it costs one branch per sequence.
#pragma once

#include "backends/cpu/thunk.h"

namespace kiln::cpu {

bool ThunkProfilingEnabled();

// Runs `sequence`, adding each thunk's time to the process-wide table.
Status RunProfiled(const ThunkSequence& sequence, ExecutionContext& context);

}  // namespace kiln::cpu
