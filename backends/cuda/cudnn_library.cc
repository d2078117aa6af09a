#include "backends/cuda/cudnn_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace kiln::cuda {

StatusOr<const Cudnn*> Cudnn::LoadFrom(const std::string& path) {
  // RTLD_NODELETE: cuDNN keeps state tied to the CUDA context, so it is
  // never unloaded; RTLD_LOCAL keeps its symbols to itself.
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (library == nullptr) {
    const char* reason = dlerror();
    return Unavailable(reason != nullptr ? reason : path + ": cannot be loaded");
  }
  auto* cudnn = new Cudnn();
  cudnn->path_ = path;
#define KILN_CUDNN_RESOLVE(field, symbol, type)                                              \
  cudnn->api_.field = reinterpret_cast<type>(dlsym(library, symbol));                        \
  if (cudnn->api_.field == nullptr) {                                                        \
    delete cudnn;                                                                            \
    dlclose(library);                                                                        \
    return Unavailable(path, " has no ", symbol, " (not cuDNN 8 or 9 with its legacy API)"); \
  }
  KILN_CUDNN_FUNCTIONS(KILN_CUDNN_RESOLVE)
#undef KILN_CUDNN_RESOLVE
  // major * 10000 + minor * 100 + patch from cuDNN 9 on, major * 1000 +
  // minor * 100 + patch before.
  const size_t number = cudnn->api_.GetVersion();
  const size_t major_unit = number >= 90000 ? 10000 : 1000;
  cudnn->version_ = std::to_string(number / major_unit) + "." + std::to_string(number % major_unit / 100) +
                    "." + std::to_string(number % 100);
  return static_cast<const Cudnn*>(cudnn);
}

StatusOr<const Cudnn*> Cudnn::Load() {
  const char* override_path = std::getenv("KILN_CUDNN_LIBRARY");
  if (override_path != nullptr && *override_path != 0) {
    StatusOr<const Cudnn*> loaded = LoadFrom(override_path);
    if (loaded.ok()) return loaded;
    return Unavailable("KILN_CUDNN_LIBRARY=", override_path, ": ", loaded.status().message());
  }
  std::string reasons;
  for (const char* name : {"libcudnn.so.9", "libcudnn.so.8"}) {
    StatusOr<const Cudnn*> loaded = LoadFrom(name);
    if (loaded.ok()) return loaded;
    reasons += (reasons.empty() ? "" : "; ") + loaded.status().message();
  }
  return Unavailable(reasons,
                     " (set LD_LIBRARY_PATH to the directory of libcudnn.so.9 or .8, or "
                     "KILN_CUDNN_LIBRARY to the file)");
}

StatusOr<const Cudnn*> Cudnn::Get() {
  // Loaded once; intentionally never freed (the library is process-wide).
  static const StatusOr<const Cudnn*>* loaded = new StatusOr<const Cudnn*>(Load());
  return *loaded;
}

Status Cudnn::Check(cudnnStatus_t status, std::string_view what) const {
  if (status == CUDNN_STATUS_SUCCESS) return OkStatus();
  const char* words = api_.GetErrorString(status);
  return Internal("cuda: ", what, " failed: ", words != nullptr ? words : "(no description)",
                  " (cuDNN status ", status, ")");
}

}  // namespace kiln::cuda
