// The verifier: checks a module's structure (one entry, roots, operands in
// the same computation and before their users, parameter numbering, called
// computations present with the right arity) and re-runs shape inference on
// every instruction. Run after parsing, building and every pass.
#pragma once

#include "core/ir.h"
#include "core/status.h"

namespace kiln {

Status VerifyModule(const Module& module);

}  // namespace kiln
