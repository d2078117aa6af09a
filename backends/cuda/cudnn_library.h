// cuDNN, loaded with dlopen on first use and never linked, as cuBLAS is
// (cublas_library.h): `KILN_CUDNN_LIBRARY` (a full path) when that is set,
// and then only that file; otherwise "libcudnn.so.9", then "libcudnn.so.8",
// found by the dynamic loader's usual search. When none loads, the CUDA
// backend runs every convolution with its own kernels (the implicit GEMM,
// convolution_gemm_emitter.h) and `kiln info` says why.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>

#include "backends/cuda/cudnn_api.h"
#include "core/status.h"

namespace kiln::cuda {

struct CudnnFunctions {
#define KILN_CUDNN_FIELD(field, symbol, type) std::type_identity_t<type> field = nullptr;
  KILN_CUDNN_FUNCTIONS(KILN_CUDNN_FIELD)
#undef KILN_CUDNN_FIELD
};

class Cudnn {
 public:
  // The process-wide library, loaded on the first call; the same error
  // (UNAVAILABLE, naming each file tried and why it failed) on every call
  // when that failed. Thread-safe.
  static StatusOr<const Cudnn*> Get();

  const CudnnFunctions& api() const { return api_; }
  // The file that was loaded, and its version ("9.1.0").
  const std::string& path() const { return path_; }
  const std::string& version() const { return version_; }

  // OK for CUDNN_STATUS_SUCCESS, else INTERNAL naming `what` (the call that
  // failed), the library's own words for the status and its number.
  Status Check(cudnnStatus_t status, std::string_view what) const;

 private:
  Cudnn() = default;
  static StatusOr<const Cudnn*> Load();
  static StatusOr<const Cudnn*> LoadFrom(const std::string& path);

  CudnnFunctions api_;
  std::string path_;
  std::string version_;
};

}  // namespace kiln::cuda
