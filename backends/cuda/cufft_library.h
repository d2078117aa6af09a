// cuFFT, loaded with dlopen on first use and never linked, as cuBLAS is
// (cublas_library.h): `KILN_CUFFT_LIBRARY` (a full path) when that is set,
// and then only that file; otherwise "libcufft.so.12", then
// "libcufft.so.11" (CUDA 13's ABI first, then CUDA 12's), found by the
// dynamic loader's usual search. When none loads, the CUDA backend runs
// fft as the shared device expansion (core/passes/device_op_expansion.h)
// and `kiln info` says why.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>

#include "backends/cuda/cufft_api.h"
#include "core/status.h"

namespace kiln::cuda {

struct CufftFunctions {
#define KILN_CUFFT_FIELD(field, symbol, type) std::type_identity_t<type> field = nullptr;
  KILN_CUFFT_FUNCTIONS(KILN_CUFFT_FIELD)
#undef KILN_CUFFT_FIELD
};

class Cufft {
 public:
  // The process-wide library, loaded on the first call; the same error
  // (UNAVAILABLE, naming each file tried and why it failed) on every call
  // when that failed. Thread-safe.
  static StatusOr<const Cufft*> Get();

  const CufftFunctions& api() const { return api_; }
  // The file that was loaded, and its version ("12.0.0").
  const std::string& path() const { return path_; }
  const std::string& version() const { return version_; }

  // OK for CUFFT_SUCCESS, else an error naming `what` (the call that
  // failed) and the result: ALLOC_FAILED is RESOURCE_EXHAUSTED,
  // INVALID_VALUE and INVALID_SIZE INVALID_ARGUMENT, NOT_SUPPORTED and
  // NOT_IMPLEMENTED UNIMPLEMENTED, everything else INTERNAL.
  static Status Check(cufftResult result, std::string_view what);
  // "CUFFT_EXEC_FAILED", or "cuFFT result N" for a code cufft_api.h does not name.
  static std::string ResultName(cufftResult result);

 private:
  Cufft() = default;
  static StatusOr<const Cufft*> Load();
  static StatusOr<const Cufft*> LoadFrom(const std::string& path);

  CufftFunctions api_;
  std::string path_;
  std::string version_;
};

}  // namespace kiln::cuda
