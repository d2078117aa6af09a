// What the elemental emitter can compile: checked up front so that the
// runtime can route anything else (dot, sort, gather, complex, ...) to its
// other paths instead of failing mid-compile.
#pragma once

#include "core/ir.h"
#include "core/status.h"

namespace kiln::cpu::codegen {

// OK, or UNIMPLEMENTED naming the first op (and element type) that cannot
// be emitted, in `computation` or any computation it calls.
Status CheckEmittable(const Computation& computation);

}  // namespace kiln::cpu::codegen
