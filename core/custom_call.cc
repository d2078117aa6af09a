#include <map>
#include <mutex>

#include "core/backend.h"

namespace kiln {
namespace {

struct CustomCallTable {
  std::mutex mutex;
  std::map<std::string, CustomCallFunction> functions;
};

CustomCallTable& Table() {
  static CustomCallTable* table = new CustomCallTable();  // never destroyed: safe at exit
  return *table;
}

}  // namespace

Status RegisterCustomCallTarget(const std::string& name, CustomCallFunction function) {
  if (name.empty()) return InvalidArgument("custom-call target name is empty");
  if (function == nullptr) return InvalidArgument("custom-call target '", name, "' has a null function");
  CustomCallTable& table = Table();
  std::lock_guard<std::mutex> lock(table.mutex);
  auto [it, inserted] = table.functions.emplace(name, function);
  if (!inserted && it->second != function) {
    return AlreadyExists("custom-call target '", name, "' is already registered with another function");
  }
  return OkStatus();
}

CustomCallFunction FindCustomCallTarget(const std::string& name) {
  CustomCallTable& table = Table();
  std::lock_guard<std::mutex> lock(table.mutex);
  auto it = table.functions.find(name);
  return it == table.functions.end() ? nullptr : it->second;
}

}  // namespace kiln
