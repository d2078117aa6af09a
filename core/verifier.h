// The verifier: checks a module's structure (one entry, roots, operands in
// the same computation and before their users, parameter numbering, called
// computations present with the right arity) and re-runs shape inference on
// every instruction. Run after parsing, building and optimising.
#pragma once

#include "core/ir.h"
#include "core/status.h"

namespace kiln {

Status VerifyModule(const Module& module);

// The structural checks of VerifyModule (operands defined before their users
// in the same computation, calls, parameters, constants' values) without
// re-inferring any shape or looking for duplicate names: linear and cheap,
// for between the passes of a pipeline, which verifies in full once at its
// end (core/pass.h).
Status VerifyModuleStructure(const Module& module);

}  // namespace kiln
