// The CUDA driver, loaded with dlopen("libcuda.so.1") on first use so that
// libkiln.so builds and loads on machines without one. Every entry point of
// driver_api.h is resolved once; a missing library or symbol makes the
// driver UNAVAILABLE with a message naming it, and nothing else in Kiln is
// affected.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>

#include "backends/cuda/driver_api.h"
#include "core/status.h"

namespace kiln::cuda {

struct DriverFunctions {
#define KILN_CUDA_DRIVER_FIELD(field, symbol, type) std::type_identity_t<type> field = nullptr;
  KILN_CUDA_DRIVER_FUNCTIONS(KILN_CUDA_DRIVER_FIELD)
#undef KILN_CUDA_DRIVER_FIELD
};

class Driver {
 public:
  // The process-wide driver, loaded and cuInit-ed on the first call; the
  // same error on every call when that failed. Thread-safe. The library
  // is `KILN_CUDA_DRIVER` when that is set (tests point it at a fake
  // driver), else libcuda.so.1 from the loader's search path.
  static StatusOr<const Driver*> Get();

  const DriverFunctions& api() const { return api_; }
  int version() const { return version_; }  // e.g. 12040 for CUDA 12.4

  // OK for CUDA_SUCCESS, else an error whose message names `what` (the call
  // that failed), the driver's error name and text. Out-of-memory becomes
  // RESOURCE_EXHAUSTED; everything else INTERNAL, except the codes listed
  // in the implementation.
  Status Check(CUresult result, std::string_view what) const;

 private:
  Driver() = default;
  static StatusOr<const Driver*> Load();

  DriverFunctions api_;
  int version_ = 0;
};

}  // namespace kiln::cuda
