// Backends, clients, devices, the infeed and custom-call registration.
#include <algorithm>
#include <mutex>

#include "capi/internal.h"
#include "capi/struct_versions.h"

namespace kiln::capi {
namespace {

// The backend list never changes while the process runs, so it is computed
// once and kept (never destroyed: returned names stay valid at exit).
const std::vector<std::string>& Backends() {
  static const std::vector<std::string>* names = new std::vector<std::string>(BackendNames());
  return *names;
}

std::string DefaultBackendName() {
  const std::vector<std::string>& names = Backends();
  if (std::find(names.begin(), names.end(), "cpu") != names.end()) return "cpu";
  return "interpreter";
}

}  // namespace
}  // namespace kiln::capi

using kiln::Status;
using kiln::capi::Guard;

extern "C" {

kiln_status_t* kiln_backend_count(size_t* out_count) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(out_count);
    *out_count = kiln::capi::Backends().size();
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_backend_name(size_t index, const char** out_name) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(out_name);
    const std::vector<std::string>& names = kiln::capi::Backends();
    if (index >= names.size()) {
      return kiln::OutOfRange(kiln_capi_function, ": backend index ", index, " is out of range (there are ",
                              names.size(), " backends)");
    }
    *out_name = names[index].c_str();
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_client_create(const kiln_client_options_t* options, kiln_client_t** out_client) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(out_client);
    std::string name;
    if (options != nullptr) {
      KILN_ASSIGN_OR_RETURN(const kiln_client_options_t given,
                            kiln::capi::ReadStruct(kiln_capi_function, options));
      if (given.backend != nullptr) {
        name = given.backend;
        if (name.empty()) {
          return kiln::InvalidArgument(kiln_capi_function,
                                       ": backend is an empty string; pass NULL for the default backend");
        }
      }
    }
    if (name.empty()) name = kiln::capi::DefaultBackendName();
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<kiln::Backend> backend, kiln::CreateBackend(name));
    if (backend->devices().empty()) {
      return kiln::Status(kiln::StatusCode::kUnavailable,
                          std::string(kiln_capi_function) + ": backend '" + name + "' has no device");
    }
    auto client = std::make_unique<kiln_client_t>();
    client->backend = std::move(backend);
    client->backend_name = name;
    *out_client = client.release();
    return kiln::OkStatus();
  });
}

void kiln_client_destroy(kiln_client_t* client) { delete client; }

kiln_status_t* kiln_client_backend_name(const kiln_client_t* client, const char** out_name) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(client);
    KILN_CAPI_CHECK_NOT_NULL(out_name);
    *out_name = client->backend_name.c_str();
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_client_device_count(const kiln_client_t* client, size_t* out_count) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(client);
    KILN_CAPI_CHECK_NOT_NULL(out_count);
    *out_count = client->backend->devices().size();
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_client_device_description(const kiln_client_t* client, size_t index,
                                              const char** out_description) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(client);
    KILN_CAPI_CHECK_NOT_NULL(out_description);
    std::span<kiln::Device* const> devices = client->backend->devices();
    if (index >= devices.size()) {
      return kiln::OutOfRange(kiln_capi_function, ": device index ", index, " is out of range (backend '",
                              client->backend_name, "' has ", devices.size(), " devices)");
    }
    *out_description = devices[index]->description().c_str();
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_client_transfer_to_infeed(kiln_client_t* client, kiln_element_type_t type,
                                              const int64_t* dims, size_t rank, const void* data,
                                              size_t byte_size) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(client);
    KILN_ASSIGN_OR_RETURN(kiln::Shape shape, kiln::capi::ArrayShape(kiln_capi_function, type, dims, rank));
    KILN_ASSIGN_OR_RETURN(kiln::Literal literal,
                          kiln::capi::LiteralFromHost(kiln_capi_function, shape, data, byte_size));
    return client->backend->TransferToInfeed(literal);
  });
}

kiln_status_t* kiln_register_custom_call(const char* name, kiln_custom_call_fn fn) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(name);
    KILN_CAPI_CHECK_NOT_NULL(fn);
    return kiln::RegisterCustomCallTarget(name, fn);
  });
}

}  // extern "C"
