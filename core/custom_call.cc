#include <map>
#include <mutex>

#include "core/backend.h"
#include "core/builtin_custom_calls.h"
#include "core/identity_custom_calls.h"
#include "core/tape_custom_calls.h"

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
  // Built-in targets run first; a registration under their name would never run.
  if (FindBuiltinCustomCall(name) != nullptr) {
    return AlreadyExists("custom-call target '", name, "' is built into Kiln (core/builtin_custom_calls.h)");
  }
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

Status CheckCustomCallTargetsRegistered(const Module& module, std::string_view backend) {
  for (const std::unique_ptr<Computation>& computation : module.computations()) {
    for (const std::unique_ptr<Instruction>& instruction : computation->instructions()) {
      if (instruction->opcode != Opcode::kCustomCall) continue;
      const std::string& target = instruction->attrs.custom_call_target;
      if (IsIdentityCustomCall(target)) {
        KILN_RETURN_IF_ERROR(CheckIdentityCustomCall(*instruction, backend));
        continue;
      }
      if (IsTapeCustomCall(target)) {
        KILN_RETURN_IF_ERROR(CheckTapeCustomCall(*instruction, backend));
        continue;
      }
      if (FindBuiltinCustomCall(target) == nullptr && FindCustomCallTarget(target) == nullptr) {
        return NotFound(backend, ": custom-call target '", target, "' of instruction '", instruction->name,
                        "' is not registered; register it with kiln_register_custom_call before compiling");
      }
    }
  }
  return OkStatus();
}

}  // namespace kiln
