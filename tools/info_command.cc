#include "tools/info_command.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "core/backend.h"
#include "core/builtin_custom_calls.h"
#include "core/op_registry.h"
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

Status PrintOps(std::ostream& out, const std::vector<std::string>& plugins) {
  out << "built-in custom-call targets:\n";
  for (const BuiltinCustomCall& call : BuiltinCustomCalls()) out << "  " << call.target << "\n";
  out << "user-defined ops:\n";
  std::string mine = DescribeRegisteredOps();
  out << (mine.empty() ? "  (none registered in this process; load a --plugin)\n" : mine);
  for (const std::string& plugin : plugins) {
    // The plugin links libkiln.so, whose registry is not this program's.
    void* library = dlopen(plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return InvalidArgument("--plugin ", plugin, ": ", dlerror());
    using InitFn = void* (*)();
    using StatusMessageFn = const char* (*)(const void*);
    using DestroyFn = void (*)(void*);
    using DescribeFn = void* (*)(char**);
    auto symbol = [library](const char* name) { return dlsym(library, name); };
    void* init = symbol("kiln_plugin_init");
    void* describe = symbol("kiln_user_op_registry_describe");
    void* message = symbol("kiln_status_message");
    void* destroy = symbol("kiln_status_destroy");
    void* free_string = symbol("kiln_string_destroy");
    if (describe == nullptr || message == nullptr || destroy == nullptr || free_string == nullptr) {
      return InvalidArgument("--plugin ", plugin, ": it does not link a libkiln with user-defined ops");
    }
    auto fail = [&](void* status) -> Status {
      std::string text = reinterpret_cast<StatusMessageFn>(message)(status);
      reinterpret_cast<DestroyFn>(destroy)(status);
      return InvalidArgument("--plugin ", plugin, ": ", text);
    };
    if (init != nullptr) {
      if (void* status = reinterpret_cast<InitFn>(init)()) return fail(status);
    }
    char* text = nullptr;
    if (void* status = reinterpret_cast<DescribeFn>(describe)(&text)) return fail(status);
    out << "user-defined ops of " << plugin << ":\n"
        << (text != nullptr && *text != '\0' ? text : "  (none)\n");
    reinterpret_cast<DestroyFn>(free_string)(text);
  }
  return OkStatus();
}

}  // namespace kiln::tool
