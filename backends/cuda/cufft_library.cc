#include "backends/cuda/cufft_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace kiln::cuda {

StatusOr<const Cufft*> Cufft::LoadFrom(const std::string& path) {
  // RTLD_NODELETE: cuFFT keeps state tied to the CUDA context; it is never
  // unloaded. RTLD_LOCAL: its symbols stay out of the global namespace.
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (library == nullptr) {
    const char* reason = dlerror();
    return Unavailable(reason != nullptr ? reason : path + ": cannot be loaded");
  }
  auto* cufft = new Cufft();
  cufft->path_ = path;
#define KILN_CUFFT_RESOLVE(field, symbol, type)                               \
  cufft->api_.field = reinterpret_cast<type>(dlsym(library, symbol));         \
  if (cufft->api_.field == nullptr) {                                         \
    delete cufft;                                                             \
    dlclose(library);                                                         \
    return Unavailable(path, " has no ", symbol, " (not cuFFT 11 or newer)"); \
  }
  KILN_CUFFT_FUNCTIONS(KILN_CUFFT_RESOLVE)
#undef KILN_CUFFT_RESOLVE
  int version[3] = {0, 0, 0};
  const libraryPropertyType properties[3] = {MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL};
  for (int i = 0; i < 3; ++i) {
    if (cufft->api_.GetProperty(properties[i], &version[i]) != CUFFT_SUCCESS) version[i] = 0;
  }
  cufft->version_ =
      std::to_string(version[0]) + "." + std::to_string(version[1]) + "." + std::to_string(version[2]);
  return static_cast<const Cufft*>(cufft);
}

StatusOr<const Cufft*> Cufft::Load() {
  const char* override_path = std::getenv("KILN_CUFFT_LIBRARY");
  if (override_path != nullptr && *override_path != 0) {
    StatusOr<const Cufft*> loaded = LoadFrom(override_path);
    if (loaded.ok()) return loaded;
    return Unavailable("KILN_CUFFT_LIBRARY=", override_path, ": ", loaded.status().message());
  }
  std::string reasons;
  for (const char* name : {"libcufft.so.12", "libcufft.so.11"}) {
    StatusOr<const Cufft*> loaded = LoadFrom(name);
    if (loaded.ok()) return loaded;
    reasons += (reasons.empty() ? "" : "; ") + loaded.status().message();
  }
  return Unavailable(reasons,
                     " (set LD_LIBRARY_PATH to the directory of libcufft.so.12 or .11, or "
                     "KILN_CUFFT_LIBRARY to the file)");
}

StatusOr<const Cufft*> Cufft::Get() {
  // Loaded once; intentionally never freed (the library is process-wide).
  static const StatusOr<const Cufft*>* loaded = new StatusOr<const Cufft*>(Load());
  return *loaded;
}

std::string Cufft::ResultName(cufftResult result) {
  switch (result) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_INCOMPLETE_PARAMETER_LIST: return "CUFFT_INCOMPLETE_PARAMETER_LIST";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "cuFFT result " + std::to_string(result);
  }
}

Status Cufft::Check(cufftResult result, std::string_view what) {
  if (result == CUFFT_SUCCESS) return OkStatus();
  const std::string message = "cuda: " + std::string(what) + " failed: " + ResultName(result);
  switch (result) {
    case CUFFT_ALLOC_FAILED: return ResourceExhausted(message);
    case CUFFT_INVALID_VALUE:
    case CUFFT_INVALID_SIZE: return InvalidArgument(message);
    case CUFFT_NOT_IMPLEMENTED:
    case CUFFT_NOT_SUPPORTED: return Unimplemented(message);
    default: return Internal(message);
  }
}

}  // namespace kiln::cuda
