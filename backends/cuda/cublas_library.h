// cuBLAS, loaded with dlopen on first use and never linked, so that
// libkiln.so builds and loads on machines without CUDA. The library is
// `KILN_CUBLAS_LIBRARY` (a full path) when that is set, and then only that
// file, so that a wrong path is reported rather than silently replaced;
// otherwise "libcublas.so.13", then "libcublas.so.12" (the CUDA 13 ABI
// first), found by the dynamic loader's usual search (LD_LIBRARY_PATH,
// the ld.so cache). When none loads, the CUDA backend runs dots with its
// own kernels and `kiln info` says why.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>

#include "backends/cuda/cublas_api.h"
#include "core/status.h"

namespace kiln::cuda {

struct CublasFunctions {
#define KILN_CUBLAS_FIELD(field, symbol, type) std::type_identity_t<type> field = nullptr;
  KILN_CUBLAS_FUNCTIONS(KILN_CUBLAS_FIELD)
#undef KILN_CUBLAS_FIELD
};

class Cublas {
 public:
  // The process-wide library, loaded on the first call; the same error
  // (UNAVAILABLE, naming each file tried and why it failed) on every call
  // when that failed. Thread-safe.
  static StatusOr<const Cublas*> Get();

  const CublasFunctions& api() const { return api_; }
  // The file that was loaded, and its version ("13.1.0").
  const std::string& path() const { return path_; }
  const std::string& version() const { return version_; }

  // OK for CUBLAS_STATUS_SUCCESS, else an error naming `what` (the call
  // that failed) and the status: ALLOC_FAILED is RESOURCE_EXHAUSTED,
  // INVALID_VALUE INVALID_ARGUMENT, NOT_SUPPORTED and ARCH_MISMATCH
  // UNIMPLEMENTED, everything else INTERNAL.
  static Status Check(cublasStatus_t status, std::string_view what);
  // "CUBLAS_STATUS_EXECUTION_FAILED", or "cuBLAS status N" for a code
  // cublas_api.h does not name.
  static std::string StatusName(cublasStatus_t status);

 private:
  Cublas() = default;
  static StatusOr<const Cublas*> Load();
  static StatusOr<const Cublas*> LoadFrom(const std::string& path);

  CublasFunctions api_;
  std::string path_;
  std::string version_;
};

}  // namespace kiln::cuda
