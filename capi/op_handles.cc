#include "capi/op_handles.h"

#include <mutex>
#include <optional>
#include <unordered_map>

namespace kiln::capi {
namespace {

constexpr uint32_t kMaxTag = (uint32_t{1} << 31) - 1;

// The live builders' tags and names. Never destroyed, so a builder freed
// during exit still finds it.
struct BuilderRegistry {
  std::mutex mutex;  // guards everything below
  std::unordered_map<uint32_t, std::string> names;
  uint32_t next = 1;
};

BuilderRegistry& Registry() {
  static BuilderRegistry* registry = new BuilderRegistry();
  return *registry;
}

uint32_t After(uint32_t tag) { return tag == kMaxTag ? 1 : tag + 1; }

std::optional<std::string> LiveBuilderName(uint32_t tag) {
  BuilderRegistry& registry = Registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto found = registry.names.find(tag);
  if (found == registry.names.end()) return std::nullopt;
  return found->second;
}

}  // namespace

uint32_t AcquireBuilderTag(const std::string& name) {
  BuilderRegistry& registry = Registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  // Tags are handed out in turn, so one is reused only after 2^31 builders,
  // and never while its builder lives.
  uint32_t tag = registry.next;
  while (registry.names.count(tag) != 0) tag = After(tag);
  registry.names.emplace(tag, name);
  registry.next = After(tag);
  return tag;
}

void ReleaseBuilderTag(uint32_t tag) noexcept {
  BuilderRegistry& registry = Registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.names.erase(tag);
}

StatusOr<size_t> OpIndex(const char* function, std::string_view what, kiln_op_t handle, uint32_t tag,
                         const std::string& name, size_t num_ops) {
  const auto bits = static_cast<uint64_t>(handle);
  const auto handle_tag = static_cast<uint32_t>(bits >> 32);
  const auto index = static_cast<size_t>(bits & 0xffffffffu);
  if (handle_tag == tag && index < num_ops) return index;
  if (handle == KILN_OP_INVALID) {
    return InvalidArgument(
        function, ": ", what,
        " is KILN_OP_INVALID, the result of a failed op (kiln_builder_first_error says why)");
  }
  if (handle_tag == tag) {
    return InvalidArgument(function, ": ", what, " (handle ", handle, ") names op #", index, " of builder '",
                           name, "' (#", tag, "), which holds only ", num_ops, num_ops == 1 ? " op" : " ops");
  }
  if (handle_tag == 0 || handle_tag > kMaxTag) {
    return InvalidArgument(function, ": ", what, " (handle ", handle, ") is not an op handle of builder '",
                           name, "' (#", tag, "); use the values its kiln_op_* calls return");
  }
  if (std::optional<std::string> other = LiveBuilderName(handle_tag)) {
    return InvalidArgument(function, ": ", what, " is op #", index, " of builder '", *other, "' (#",
                           handle_tag, "), not of builder '", name, "' (#", tag,
                           "); an op may only be used with the builder that made it");
  }
  return InvalidArgument(function, ": ", what, " (handle ", handle, ") is not an op of builder '", name,
                         "' (#", tag, "): it names op #", index, " of builder #", handle_tag,
                         ", which no longer exists");
}

}  // namespace kiln::capi
