// What the elemental emitter can compile: checked up front so that the
// runtime can route anything else (dot, sort, gather, complex, ...) to its
// other paths instead of failing mid-compile.
#pragma once

#include "core/ir.h"
#include "core/status.h"

namespace kiln::llvm_ir {

struct EmittableOptions {
  // A dynamic-update-slice root, emitted elementally (each output element
  // from the update or the operand). The CPU runtime keeps its in-place
  // thunk instead, which writes only the update; a GPU has no such path.
  bool dynamic_update_slice_root = false;
};

// OK, or UNIMPLEMENTED naming the first op (and element type) that cannot
// be emitted, in `computation` or any computation it calls.
Status CheckEmittable(const Computation& computation, const EmittableOptions& options = {});

// The same answer as CheckEmittable on SingleInstructionComputation(instruction)
// (the instruction alone, its operands as parameters), without building that
// computation when the answer cannot depend on it: the fusion pass asks this
// of every instruction of a module, and at 100k instructions the copies were
// a tenth of the compile (issue 13).
Status CheckInstructionEmittable(const Instruction& instruction, const EmittableOptions& options = {});

}  // namespace kiln::llvm_ir
