// Identity of a kernel computation: two computations with equal keys compute
// the same function of the same parameters, so one compiled kernel serves
// both (a layer repeated, a long chain cut into fusions of the same ops).
#pragma once

#include <string>

#include "core/ir.h"

namespace kiln {

// The computation's HLO text with its own name and its instructions' names
// replaced by positions (the text round-trips every attribute and constant
// exactly).
std::string KernelKey(const Computation& computation);

}  // namespace kiln
