#include "tools/info_command.h"

#include <string>

#include "core/backend.h"
#include "tools/backend_choice.h"

namespace kiln::tool {
namespace {

std::string SupportedElementTypes(const Backend& backend) {
  std::string names;
  for (int value = static_cast<int>(ElementType::kPred); value <= static_cast<int>(ElementType::kC128);
       ++value) {
    const auto type = static_cast<ElementType>(value);
    if (!backend.SupportsElementType(type)) continue;
    if (!names.empty()) names += " ";
    names += ElementTypeName(type);
  }
  return names.empty() ? "(none)" : names;
}

}  // namespace

void PrintInfo(std::ostream& out) {
  const std::string default_name = DefaultBackendName();
  out << "kiln " << KILN_VERSION_STRING << "\n";
  out << "backends:\n";
  for (const std::string& name : BackendNames()) {
    out << "  " << name << (name == default_name ? " (default)" : "") << "\n";
    StatusOr<std::unique_ptr<Backend>> backend = CreateBackend(name);
    if (!backend.ok() || *backend == nullptr) {
      out << "    unavailable: " << (backend.ok() ? "not created" : backend.status().ToString()) << "\n";
      continue;
    }
    out << "    devices:\n";
    for (const Device* device : (*backend)->devices()) {
      out << "      " << device->id() << ": " << device->description() << "\n";
    }
    out << "    element types: " << SupportedElementTypes(**backend) << "\n";
    out << "    max buffer bytes: " << (*backend)->max_buffer_bytes() << "\n";
  }
}

}  // namespace kiln::tool
