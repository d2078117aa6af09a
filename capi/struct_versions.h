// Option and description structs across kiln.h versions. Each struct's size in
// the first kiln.h that had it is frozen here: a program compiled against that
// header passes it as struct_size and must keep working after fields are
// added. The library reads a caller's struct into a whole one of its own,
// whose fields past the caller's struct_size keep their defaults.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "capi/include/kiln/kiln.h"
#include "core/status.h"

namespace kiln::capi {

// Bytes of `type` up to and including `field`.
#define KILN_SIZE_THROUGH(type, field) (offsetof(type, field) + sizeof(static_cast<type*>(nullptr)->field))

// Per struct: its name in messages, its first version's size (never change it:
// it is the oldest caller's struct_size), and the defaults of every field.
template <typename T>
struct StructVersion;

#define KILN_STRUCT_VERSION(type, last_v1_field, ...)                            \
  template <>                                                                    \
  struct StructVersion<type> {                                                   \
    static constexpr const char* kName = #type;                                  \
    static constexpr size_t kFirstSize = KILN_SIZE_THROUGH(type, last_v1_field); \
    static type Defaults() { return __VA_ARGS__; }                               \
  }

KILN_STRUCT_VERSION(kiln_client_options_t, backend, KILN_CLIENT_OPTIONS_INIT);
KILN_STRUCT_VERSION(kiln_compile_options_t, num_threads, KILN_COMPILE_OPTIONS_INIT);
KILN_STRUCT_VERSION(kiln_execute_options_t, rng_seed, KILN_EXECUTE_OPTIONS_INIT);
KILN_STRUCT_VERSION(kiln_gather_dimension_numbers_t, num_start_indices_batching_dims,
                    KILN_GATHER_DIMENSION_NUMBERS_INIT);
KILN_STRUCT_VERSION(kiln_scatter_dimension_numbers_t, num_scatter_indices_batching_dims,
                    KILN_SCATTER_DIMENSION_NUMBERS_INIT);
KILN_STRUCT_VERSION(kiln_dot_dimension_numbers_t, num_rhs_batch_dimensions, KILN_DOT_DIMENSION_NUMBERS_INIT);
KILN_STRUCT_VERSION(kiln_conv_dimension_numbers_t, num_spatial_dimensions, KILN_CONV_DIMENSION_NUMBERS_INIT);

#undef KILN_STRUCT_VERSION

// The caller's struct (non-NULL) as a whole struct of this library's version:
// the first struct_size bytes come from the caller, the rest are defaults; a
// newer caller's extra fields are ignored. A struct_size below the first
// version's is INVALID_ARGUMENT naming `function`.
template <typename T>
StatusOr<T> ReadStruct(const char* function, const T* given) {
  using Version = StructVersion<T>;
  size_t given_size = 0;
  std::memcpy(&given_size, given, sizeof(given_size));  // struct_size leads every version
  if (given_size < Version::kFirstSize) {
    return InvalidArgument(function, ": ", Version::kName, ".struct_size is ", given_size,
                           " but must be at least ", Version::kFirstSize,
                           " (initialise the struct with its *_INIT macro)");
  }
  T whole = Version::Defaults();
  std::memcpy(static_cast<void*>(&whole), static_cast<const void*>(given), std::min(given_size, sizeof(T)));
  whole.struct_size = sizeof(T);
  return whole;
}

}  // namespace kiln::capi
