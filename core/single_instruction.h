// A computation holding one instruction whose operands became parameters
// 0..N-1: the kernel a backend makes of an instruction that runs alone
// (whether it can is its emittable table's answer, no such computation).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/ir.h"

namespace kiln {

std::unique_ptr<Computation> SingleInstructionComputation(const Instruction& instruction,
                                                          const std::string& name);

// How many SingleInstructionComputation has built in this process (all
// threads): what shows that asking the emittable tables builds none.
int64_t SingleInstructionComputationsBuilt();

}  // namespace kiln
