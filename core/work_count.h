// A process-wide count of the instructions that whole-computation walks visit
// (the IR's editing primitives, the verifier, the passes' user scans): each
// walk adds the number of instructions it looks at. Compile-time tests compare
// the count across program sizes, so a pass that walks a whole computation
// once per rewrite shows as quadratic growth without timing anything. Relaxed
// atomic adds, one per walk, not per instruction: nearly free.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln {

void CountInstructionsWalked(size_t instructions);
// The total since the process started.
uint64_t InstructionsWalked();

}  // namespace kiln
