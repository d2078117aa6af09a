// Reading an HLO text module and its .npy inputs from disk: what `kiln run`
// and `kiln bench` share before they compile.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/ir.h"
#include "core/literal.h"
#include "core/status.h"

namespace kiln::tool {

// Parses the HLO text file at `path`; errors name the file. The module is
// known to have an ENTRY computation.
StatusOr<std::unique_ptr<Module>> LoadModule(const std::string& path);

// The leaves of ENTRY's parameters, in order (tuples flattened).
std::vector<Shape> EntryParameterLeaves(const Module& module);

// Reads one .npy file per array leaf of ENTRY's parameters, in order.
StatusOr<std::vector<Literal>> LoadInputs(const Module& module, const std::vector<std::string>& paths);

}  // namespace kiln::tool
