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

// One handle per device of `backend`, made once per client.
std::shared_ptr<const ClientDevices> MakeDeviceHandles(std::shared_ptr<Backend> backend) {
  auto devices = std::make_shared<ClientDevices>();
  devices->backend = std::move(backend);
  std::span<Device* const> list = devices->backend->devices();
  for (size_t i = 0; i < list.size(); ++i) {
    devices->handles.push_back(std::make_unique<kiln_device_t>(kiln_device_t{devices.get(), list[i], i}));
  }
  return devices;
}

}  // namespace

kiln_device_t* ClientDevices::Find(const Device* device) const {
  for (const auto& handle : handles) {
    if (handle->device == device) return handle.get();
  }
  return nullptr;
}

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
    kiln::BackendOptions backend_options;
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
      backend_options.num_devices = given.num_devices;
    }
    if (name.empty()) name = kiln::capi::DefaultBackendName();
    kiln::StatusOr<std::unique_ptr<kiln::Backend>> created = kiln::CreateBackend(name, backend_options);
    if (!created.ok()) {
      if (created.status().code() != kiln::StatusCode::kInvalidArgument) return created.status();
      return created.status().WithContext(std::string(kiln_capi_function) +
                                          ": kiln_client_options_t.num_devices");
    }
    std::unique_ptr<kiln::Backend> backend = std::move(created).value();
    if (backend->devices().empty()) {
      return kiln::Status(kiln::StatusCode::kUnavailable,
                          std::string(kiln_capi_function) + ": backend '" + name + "' has no device");
    }
    auto client = std::make_unique<kiln_client_t>();
    client->backend = std::move(backend);
    client->devices = kiln::capi::MakeDeviceHandles(client->backend);
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

kiln_status_t* kiln_client_device(const kiln_client_t* client, size_t index, kiln_device_t** out_device) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(client);
    KILN_CAPI_CHECK_NOT_NULL(out_device);
    const auto& handles = client->devices->handles;
    if (index >= handles.size()) {
      return kiln::OutOfRange(kiln_capi_function, ": device index ", index, " is out of range (backend '",
                              client->backend_name, "' has ", handles.size(),
                              " devices; kiln_client_device_count says how many)");
    }
    *out_device = handles[index].get();
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_device_index(const kiln_device_t* device, size_t* out_index) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(device);
    KILN_CAPI_CHECK_NOT_NULL(out_index);
    *out_index = device->index;
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_device_description(const kiln_device_t* device, const char** out_description) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(device);
    KILN_CAPI_CHECK_NOT_NULL(out_description);
    *out_description = device->device->description().c_str();
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
