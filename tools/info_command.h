// `kiln info`: the backends of this build, their devices and capabilities.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/status.h"

namespace kiln::tool {

// A backend that cannot run here is listed as unavailable with the reason;
// that is not an error.
void PrintInfo(std::ostream& out);

// `kiln info --ops`: the built-in custom-call targets and the user-defined
// ops of this process and of each plugin library (loaded with dlopen; its
// kiln_plugin_init, when it has one, runs first). An error names the plugin.
Status PrintOps(std::ostream& out, const std::vector<std::string>& plugins);

}  // namespace kiln::tool
