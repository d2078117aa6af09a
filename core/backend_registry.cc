// The explicit list of backends this build contains. A new backend adds one
// entry here (no static registration, so link order never matters).
#include <memory>

#include "core/backend.h"
#include "core/interpreter/interpreter_backend.h"

namespace kiln {

std::vector<std::string> BackendNames() { return {"interpreter"}; }

StatusOr<std::unique_ptr<Backend>> CreateBackend(std::string_view name) {
  if (name == "interpreter")
    return std::unique_ptr<Backend>(std::make_unique<interpreter::InterpreterBackend>());
  std::string known;
  for (const std::string& candidate : BackendNames()) known += (known.empty() ? "" : ", ") + candidate;
  return NotFound("no backend named '", name, "'; this build has: ", known);
}

}  // namespace kiln
