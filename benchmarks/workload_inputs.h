// Loading a benchmark workload's HLO text and making inputs for it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/ir.h"
#include "core/literal.h"
#include "core/status.h"

namespace kiln::bench {

// Parses the HLO text file at `path`.
StatusOr<std::unique_ptr<Module>> LoadWorkload(const std::string& path);

// One literal per array leaf of ENTRY's parameters: floats (and both parts
// of complex numbers) drawn from a standard normal distribution with a fixed
// seed, integers zero (a valid class label or index for every workload).
StatusOr<std::vector<Literal>> MakeInputs(const Module& module);

}  // namespace kiln::bench
