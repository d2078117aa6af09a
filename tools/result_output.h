// What `kiln run` does with the result leaves: write them as .npy files or
// print them.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/literal.h"
#include "core/status.h"

namespace kiln::tool {

// Writes leaf i as `directory`/i.npy, creating the directory when missing.
Status WriteResults(const std::vector<Literal>& results, const std::string& directory);

// Prints one line per leaf: "result 0: f32[2,2] {{1, 2}, {3, 4}}".
void PrintResults(const std::vector<Literal>& results, std::ostream& out);

}  // namespace kiln::tool
