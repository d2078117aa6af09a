// Statuses, strings and versions of the C ABI.
#include <cstdlib>
#include <cstring>

#include "capi/internal.h"

namespace kiln::capi {
namespace {

// Returned when allocating a status fails, so it must not need allocating
// itself at that moment: built on first use (the message fits the small-string
// buffer) and never freed by kiln_status_destroy.
kiln_status_t& StaticOutOfMemory() {
  static kiln_status_t status{StatusCode::kResourceExhausted, "out of memory"};
  return status;
}

}  // namespace

kiln_status_t* OutOfMemoryStatus() noexcept { return &StaticOutOfMemory(); }

bool IsStaticStatus(const kiln_status_t* status) noexcept { return status == &StaticOutOfMemory(); }

kiln_status_t* ToCStatus(const Status& status) noexcept {
  if (status.ok()) return nullptr;
  try {
    return new kiln_status_t{status.code(), status.message()};
  } catch (...) {
    return OutOfMemoryStatus();
  }
}

Status NullArgument(const char* function, const char* parameter) {
  return InvalidArgument(function, ": argument '", parameter, "' is NULL");
}

}  // namespace kiln::capi

extern "C" {

const char* kiln_version(void) {
#define KILN_STRINGIFY_INNER(x) #x
#define KILN_STRINGIFY(x) KILN_STRINGIFY_INNER(x)
  return KILN_STRINGIFY(KILN_VERSION_MAJOR) "." KILN_STRINGIFY(KILN_VERSION_MINOR) "." KILN_STRINGIFY(
      KILN_VERSION_PATCH);
#undef KILN_STRINGIFY
#undef KILN_STRINGIFY_INNER
}

uint32_t kiln_version_number(void) { return KILN_VERSION_NUMBER; }

kiln_status_code_t kiln_status_code(const kiln_status_t* status) {
  return status == nullptr ? KILN_STATUS_OK : static_cast<kiln_status_code_t>(status->code);
}

const char* kiln_status_message(const kiln_status_t* status) {
  return status == nullptr ? "" : status->message.c_str();
}

const char* kiln_status_code_name(kiln_status_code_t code) {
  if (code < KILN_STATUS_OK || code > KILN_STATUS_DATA_LOSS) return "UNKNOWN_CODE";
  return kiln::StatusCodeName(static_cast<kiln::StatusCode>(code));
}

void kiln_status_destroy(kiln_status_t* status) {
  if (status == nullptr || kiln::capi::IsStaticStatus(status)) return;
  delete status;
}

void kiln_string_destroy(char* string) { std::free(string); }

}  // extern "C"
