// A computation holding one instruction whose operands became parameters
// 0..N-1: how a backend asks its code generator whether an instruction can
// be a kernel of its own, and makes that kernel.
#pragma once

#include <memory>
#include <string>

#include "core/ir.h"

namespace kiln {

std::unique_ptr<Computation> SingleInstructionComputation(const Instruction& instruction,
                                                          const std::string& name);

}  // namespace kiln
