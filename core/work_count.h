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

// Instructions whose shape the verifier inferred again (the costly part of
// verifying), since the process started: a pipeline that re-infers every
// shape after each pass shows as a multiple of the module's size.
void CountShapesVerified(size_t instructions);
uint64_t ShapesVerified();

}  // namespace kiln
