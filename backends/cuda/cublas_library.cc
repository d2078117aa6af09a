#include "backends/cuda/cublas_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace kiln::cuda {

StatusOr<const Cublas*> Cublas::LoadFrom(const std::string& path) {
  // RTLD_NODELETE: cuBLAS keeps state tied to the CUDA context that must
  // outlive any dlclose; it is never unloaded. RTLD_LOCAL: its symbols
  // stay out of the process's global namespace.
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (library == nullptr) {
    const char* reason = dlerror();
    return Unavailable(reason != nullptr ? reason : path + ": cannot be loaded");
  }
  auto* cublas = new Cublas();
  cublas->path_ = path;
#define KILN_CUBLAS_RESOLVE(field, symbol, type)                               \
  cublas->api_.field = reinterpret_cast<type>(dlsym(library, symbol));         \
  if (cublas->api_.field == nullptr) {                                         \
    delete cublas;                                                             \
    dlclose(library);                                                          \
    return Unavailable(path, " has no ", symbol, " (not cuBLAS 12 or newer)"); \
  }
  KILN_CUBLAS_FUNCTIONS(KILN_CUBLAS_RESOLVE)
#undef KILN_CUBLAS_RESOLVE
  int version[3] = {0, 0, 0};
  const libraryPropertyType properties[3] = {MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL};
  for (int i = 0; i < 3; ++i) {
    if (cublas->api_.GetProperty(properties[i], &version[i]) != CUBLAS_STATUS_SUCCESS) version[i] = 0;
  }
  cublas->version_ =
      std::to_string(version[0]) + "." + std::to_string(version[1]) + "." + std::to_string(version[2]);
  return static_cast<const Cublas*>(cublas);
}

StatusOr<const Cublas*> Cublas::Load() {
  const char* override_path = std::getenv("KILN_CUBLAS_LIBRARY");
  if (override_path != nullptr && *override_path != 0) {
    StatusOr<const Cublas*> loaded = LoadFrom(override_path);
    if (loaded.ok()) return loaded;
    return Unavailable("KILN_CUBLAS_LIBRARY=", override_path, ": ", loaded.status().message());
  }
  std::string reasons;
  for (const char* name : {"libcublas.so.13", "libcublas.so.12"}) {
    StatusOr<const Cublas*> loaded = LoadFrom(name);
    if (loaded.ok()) return loaded;
    reasons += (reasons.empty() ? "" : "; ") + loaded.status().message();
  }
  return Unavailable(reasons,
                     " (set LD_LIBRARY_PATH to the directory of libcublas.so.13 or .12, or "
                     "KILN_CUBLAS_LIBRARY to the file)");
}

StatusOr<const Cublas*> Cublas::Get() {
  // Loaded once; intentionally never freed (the library is process-wide).
  static const StatusOr<const Cublas*>* loaded = new StatusOr<const Cublas*>(Load());
  return *loaded;
}

std::string Cublas::StatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "cuBLAS status " + std::to_string(status);
  }
}

Status Cublas::Check(cublasStatus_t status, std::string_view what) {
  if (status == CUBLAS_STATUS_SUCCESS) return OkStatus();
  const std::string message = "cuda: " + std::string(what) + " failed: " + StatusName(status);
  switch (status) {
    case CUBLAS_STATUS_ALLOC_FAILED: return ResourceExhausted(message);
    case CUBLAS_STATUS_INVALID_VALUE: return InvalidArgument(message);
    case CUBLAS_STATUS_ARCH_MISMATCH:
    case CUBLAS_STATUS_NOT_SUPPORTED: return Unimplemented(message);
    default: return Internal(message);
  }
}

}  // namespace kiln::cuda
