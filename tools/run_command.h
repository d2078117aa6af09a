// `kiln run`: parse an HLO module, bind .npy (or random) inputs to its ENTRY
// parameters, compile and execute it on a backend, write or print the
// results, and check them against another backend or expected files.
#pragma once

#include <ostream>

#include "core/status.h"
#include "tools/command_line.h"

namespace kiln::tool {

enum class RunOutcome {
  kDone,
  // --compare-with or --expect found results outside the tolerance.
  kResultsDiffer,
};

// Results and comparisons are printed to `out`, progress to `progress_out`.
StatusOr<RunOutcome> RunModule(const RunArguments& arguments, std::ostream& out, std::ostream& progress_out);

}  // namespace kiln::tool
