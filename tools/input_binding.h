// Reads the .npy files given to `kiln run` and checks them against the array
// leaves of the ENTRY computation's parameters.
#pragma once

#include <string>
#include <vector>

#include "core/literal.h"
#include "core/shape.h"
#include "core/status.h"

namespace kiln::tool {

// One literal per parameter leaf, in order. Errors name the file and the
// parameter shape it was bound to.
StatusOr<std::vector<Literal>> ReadInputs(const std::vector<std::string>& paths,
                                          const std::vector<Shape>& parameter_leaves);

}  // namespace kiln::tool
