// Shared pieces of the C shim: the structs behind the opaque handles, status
// conversion and the exception barrier every exported function goes through.
#pragma once

#include <memory>
#include <new>
#include <span>
#include <string>
#include <vector>

#include "capi/include/kiln/kiln.h"
#include "capi/op_handles.h"
#include "core/backend.h"
#include "core/builder.h"
#include "core/ir.h"
#include "core/shape.h"
#include "core/status.h"
#include "core/stop_condition.h"

struct kiln_status_t {
  kiln::StatusCode code;
  std::string message;
};

// Buffers and executables share ownership of their client's backend, so a
// client destroyed before them (easy to do from a garbage-collected language)
// leaves them usable instead of dangling.
struct kiln_client_t {
  std::shared_ptr<kiln::Backend> backend;
  std::string backend_name;
};

struct kiln_computation_t {
  std::unique_ptr<kiln::Module> module;
};

struct kiln_buffer_t {
  std::shared_ptr<kiln::Backend> backend;  // declared first: outlives `buffer`
  std::unique_ptr<kiln::DeviceBuffer> buffer;
};

struct kiln_executable_t {
  std::shared_ptr<kiln::Backend> backend;  // declared first: outlives `executable`
  std::unique_ptr<kiln::Executable> executable;
};

// Shared with the executions it was given to, so destroying the handle while
// one runs is safe.
struct kiln_cancellation_t {
  std::shared_ptr<kiln::CancellationFlag> flag;
};

struct kiln_builder_t {
  explicit kiln_builder_t(const std::string& name)
      : builder(name), name(name), tag(kiln::capi::AcquireBuilderTag(name)) {}
  ~kiln_builder_t() { kiln::capi::ReleaseBuilderTag(tag); }
  kiln_builder_t(const kiln_builder_t&) = delete;
  kiln_builder_t& operator=(const kiln_builder_t&) = delete;

  kiln::Builder builder;
  const std::string name;
  // Tags this builder's handles (see capi/op_handles.h).
  const uint32_t tag;
  // C handle -> core op: a handle's low 32 bits index this table.
  std::vector<kiln::Op> ops;
  // An error found by the shim itself (bad handle, NULL array) before the core
  // builder saw the call. It is set only while the core builder has no error,
  // so whichever of the two is set came first.
  kiln::Status shim_error;

  const kiln::Status& FirstError() const { return shim_error.ok() ? builder.first_error() : shim_error; }
  bool HasError() const { return !FirstError().ok(); }
  // The op `handle` names, or INVALID_ARGUMENT from `function` naming `what`.
  kiln::StatusOr<kiln::Op> Resolve(const char* function, std::string_view what, kiln_op_t handle) const {
    KILN_ASSIGN_OR_RETURN(size_t index, kiln::capi::OpIndex(function, what, handle, tag, name, ops.size()));
    return ops[index];
  }
};

namespace kiln::capi {

// A heap status for a failed core Status; NULL for OK. Never throws: when even
// the status cannot be allocated, returns a static out-of-memory status that
// kiln_status_destroy recognises.
kiln_status_t* ToCStatus(const Status& status) noexcept;
kiln_status_t* OutOfMemoryStatus() noexcept;
bool IsStaticStatus(const kiln_status_t* status) noexcept;

template <typename... Args>
kiln_status_t* InvalidArgumentStatus(const Args&... args) noexcept {
  try {
    return ToCStatus(InvalidArgument(args...));
  } catch (...) {
    return OutOfMemoryStatus();
  }
}

// Runs `body` (returning Status) and converts the result, turning any C++
// exception into a status so none crosses the C boundary.
template <typename Body>
kiln_status_t* Guard(const char* function, Body&& body) noexcept {
  try {
    return ToCStatus(body());
  } catch (const std::bad_alloc&) {
    return ToCStatus(ResourceExhausted(function, ": out of memory"));
  } catch (const std::exception& e) {
    return ToCStatus(Internal(function, ": unexpected internal error: ", e.what()));
  } catch (...) {
    return ToCStatus(Internal(function, ": unexpected internal error"));
  }
}

// INVALID_ARGUMENT naming the NULL parameter of `function`.
Status NullArgument(const char* function, const char* parameter);

// Inside a Guard lambda, which captures the exported function's name as
// `kiln_capi_function` (a lambda's own __func__ is just "operator()").
#define KILN_CAPI_CHECK_NOT_NULL(pointer) \
  if ((pointer) == nullptr) return ::kiln::capi::NullArgument(kiln_capi_function, #pointer)

// (pointer, count) as a span; a NULL pointer with a non-zero count is an error.
StatusOr<std::span<const int64_t>> IntList(const char* function, const char* name, const int64_t* values,
                                           size_t count);

// An array shape from C arguments: checks the element type, the dims pointer
// and non-negative sizes; `minor_to_major` (rank entries) may be NULL.
StatusOr<Shape> ArrayShape(const char* function, kiln_element_type_t type, const int64_t* dims, size_t rank,
                           const int64_t* minor_to_major = nullptr);

// A literal of `shape` copied from row-major host bytes (byte size checked;
// PRED bytes normalised to 0/1).
StatusOr<Literal> LiteralFromHost(const char* function, const Shape& shape, const void* data,
                                  size_t byte_size);

}  // namespace kiln::capi
