#include "backends/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace kiln::cuda {

StatusOr<const Driver*> Driver::Load() {
  const char* override_path = std::getenv("KILN_CUDA_DRIVER");
  const std::string path = override_path != nullptr && *override_path != 0 ? override_path : "libcuda.so.1";
  // RTLD_NODELETE: the driver keeps threads and state that must outlive
  // any dlclose; it is never unloaded.
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (library == nullptr) {
    const char* reason = dlerror();
    return Unavailable("cuda: the NVIDIA driver library ", path, " cannot be loaded (",
                       reason != nullptr ? reason : "unknown reason",
                       "); install the NVIDIA driver, or use another backend (kiln_client_create with "
                       "\"cpu\")");
  }
  auto* driver = new Driver();
#define KILN_CUDA_DRIVER_RESOLVE(field, symbol, type)                                           \
  driver->api_.field = reinterpret_cast<type>(dlsym(library, symbol));                          \
  if (driver->api_.field == nullptr) {                                                          \
    delete driver;                                                                              \
    return Unavailable("cuda: the driver library ", path, " has no ", symbol,                   \
                       "; the NVIDIA driver is too old or the library is not the CUDA driver"); \
  }
  KILN_CUDA_DRIVER_FUNCTIONS(KILN_CUDA_DRIVER_RESOLVE)
#undef KILN_CUDA_DRIVER_RESOLVE
  const CUresult init = driver->api_.Init(0);
  if (init != CUDA_SUCCESS) {
    Status status = driver->Check(init, "cuInit");
    delete driver;
    return Unavailable(status.message());
  }
  int count = 0;
  const CUresult counted = driver->api_.DeviceGetCount(&count);
  if (counted != CUDA_SUCCESS || count == 0) {
    Status status = counted != CUDA_SUCCESS ? driver->Check(counted, "cuDeviceGetCount") : OkStatus();
    delete driver;
    return Unavailable("cuda: the driver finds no GPU",
                       status.ok() ? std::string() : std::string(" (") + status.message() + ")");
  }
  if (driver->api_.DriverGetVersion(&driver->version_) != CUDA_SUCCESS) driver->version_ = 0;
  return static_cast<const Driver*>(driver);
}

StatusOr<const Driver*> Driver::Get() {
  // Loaded once; intentionally never freed (the driver is process-wide).
  static const StatusOr<const Driver*>* loaded = new StatusOr<const Driver*>(Load());
  return *loaded;
}

Status Driver::Check(CUresult result, std::string_view what) const {
  if (result == CUDA_SUCCESS) return OkStatus();
  const char* name = nullptr;
  const char* text = nullptr;
  if (api_.GetErrorName == nullptr || api_.GetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
  if (api_.GetErrorString == nullptr || api_.GetErrorString(result, &text) != CUDA_SUCCESS) text = nullptr;
  std::string message = "cuda: " + std::string(what) + " failed: " +
                        (name != nullptr ? std::string(name) : "error " + std::to_string(result));
  if (text != nullptr) message += std::string(" (") + text + ")";
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY: return ResourceExhausted(message);
    case CUDA_ERROR_INVALID_VALUE: return InvalidArgument(message);
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED: return Unavailable(message);
    default: return Internal(message);
  }
}

}  // namespace kiln::cuda
