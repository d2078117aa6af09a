// `kiln run`: parse an HLO module, bind .npy inputs to its ENTRY parameters,
// compile and execute it on a backend, and write or print the results.
#pragma once

#include <ostream>

#include "core/status.h"
#include "tools/command_line.h"

namespace kiln::tool {

// Printed results go to `out`.
Status RunModule(const RunArguments& arguments, std::ostream& out);

}  // namespace kiln::tool
