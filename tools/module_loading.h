// Reading an HLO text module and its .npy inputs from disk: what `kiln run`
// and `kiln bench` share before they compile.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/ir.h"
#include "core/literal.h"
#include "core/status.h"

namespace kiln::tool {

// The most bytes of HLO text the command reads. Parsing needs several times
// the text's size, and real modules (weights are inputs, not constants) are
// far smaller.
inline constexpr size_t kMaxModuleTextBytes = size_t{256} << 20;

// Parses the HLO text file at `path`; errors name the file. The module is
// known to have an ENTRY computation. Any file works, pipes included; one
// longer than kMaxModuleTextBytes, or holding a NUL byte, is INVALID_ARGUMENT
// as soon as that is read.
StatusOr<std::unique_ptr<Module>> LoadModule(const std::string& path);

// The leaves of ENTRY's parameters, in order (tuples flattened).
std::vector<Shape> EntryParameterLeaves(const Module& module);

// Reads one .npy file per array leaf of ENTRY's parameters, in order.
StatusOr<std::vector<Literal>> LoadInputs(const Module& module, const std::vector<std::string>& paths);

}  // namespace kiln::tool
