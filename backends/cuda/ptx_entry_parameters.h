// The parameter list of a PTX kernel (`.entry NAME(.param ...)`), read from
// the text so that a registered op's kernel is checked against the op's
// frame before it is launched: cuLaunchKernel reads one value per declared
// parameter, so a kernel declaring other parameters than the frame has
// would read past it or get the wrong values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace kiln::cuda {

struct PtxEntryParameter {
  std::string name;
  int64_t bytes = 0;  // the value's size: the type's times an array's length
};

// The parameters of `.entry entry` in `ptx`, in order. INVALID_ARGUMENT when
// there is no such entry or its list is malformed (an unknown type, no
// closing parenthesis).
StatusOr<std::vector<PtxEntryParameter>> ReadPtxEntryParameters(std::string_view ptx, std::string_view entry);

}  // namespace kiln::cuda
