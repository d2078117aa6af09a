// Which backend `kiln` uses, by name or by default.
#pragma once

#include <memory>
#include <string>

#include "core/backend.h"
#include "core/status.h"

namespace kiln::tool {

// "cpu" when this build has it, else "interpreter".
std::string DefaultBackendName();

// Creates the named backend (the default one for an empty name). An unknown
// name is NOT_FOUND listing the backends this build has.
StatusOr<std::unique_ptr<Backend>> OpenBackend(const std::string& name);

}  // namespace kiln::tool
