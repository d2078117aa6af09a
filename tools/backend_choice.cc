#include "tools/backend_choice.h"

#include <algorithm>
#include <vector>

namespace kiln::tool {

std::string DefaultBackendName() {
  const std::vector<std::string> names = BackendNames();
  return std::find(names.begin(), names.end(), "cpu") != names.end() ? "cpu" : "interpreter";
}

StatusOr<std::unique_ptr<Backend>> OpenBackend(const std::string& name) {
  const std::string chosen = name.empty() ? DefaultBackendName() : name;
  const std::vector<std::string> names = BackendNames();
  if (std::find(names.begin(), names.end(), chosen) == names.end()) {
    std::string available;
    for (const std::string& known : names) available += (available.empty() ? "" : ", ") + known;
    return NotFound("unknown backend '", chosen, "' (this build has: ", available, ")");
  }
  StatusOr<std::unique_ptr<Backend>> backend = CreateBackend(chosen);
  if (!backend.ok()) return backend.status().WithContext("backend '" + chosen + "'");
  if (*backend == nullptr) return Internal("backend '", chosen, "' could not be created");
  return backend;
}

}  // namespace kiln::tool
