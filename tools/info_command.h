// `kiln info`: the backends of this build, their devices and capabilities.
#pragma once

#include <ostream>

namespace kiln::tool {

// A backend that cannot run here is listed as unavailable with the reason;
// that is not an error.
void PrintInfo(std::ostream& out);

}  // namespace kiln::tool
