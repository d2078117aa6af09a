// Shared pieces of the C shim: the structs behind the opaque handles, status
// conversion and the exception barrier every exported function goes through.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "capi/include/kiln/kiln.h"
#include "capi/op_handles.h"
#include "core/backend.h"
#include "core/builder.h"
#include "core/ir.h"
#include "core/runtime/event.h"
#include "core/shape.h"
#include "core/status.h"
#include "core/stop_condition.h"

struct kiln_status_t {
  kiln::StatusCode code;
  std::string message;
};

namespace kiln::capi {
struct ClientDevices;
}

// A device handle: owned by its client's ClientDevices, never by the caller.
struct kiln_device_t {
  const kiln::capi::ClientDevices* owner;  // which client's it is
  kiln::Device* device;
  size_t index;
};

namespace kiln::capi {

// The device handles of one client. Buffers and executables share it with
// the client, so a handle stays valid while any of them lives; it shares the
// backend, so a device handle leads to everything a call on it needs.
struct ClientDevices : std::enable_shared_from_this<ClientDevices> {
  std::shared_ptr<Backend> backend;
  std::vector<std::unique_ptr<kiln_device_t>> handles;
  // The handle of `device`, or null when it is not this client's.
  kiln_device_t* Find(const Device* device) const;
};

// What a buffer handle names. The shape and device are known when it is made;
// the data arrives when `ready` becomes ready with OK (at once for a buffer
// made from host memory, when its execution ends for a result of
// kiln_executable_execute_async). `buffer` is written once, before `ready` is
// set, and only read after awaiting it.
struct BufferSlot {
  BufferSlot(Shape shape, Device* device, Event ready)
      : shape(std::move(shape)), device(device), ready(std::move(ready)) {}
  const Shape shape;
  Device* const device;
  const Event ready;
  std::unique_ptr<DeviceBuffer> buffer;
};

}  // namespace kiln::capi

// Buffers and executables share ownership of their client's backend, so a
// client destroyed before them (easy to do from a garbage-collected language)
// leaves them usable instead of dangling.
struct kiln_client_t {
  std::shared_ptr<kiln::Backend> backend;
  std::string backend_name;
  std::shared_ptr<const kiln::capi::ClientDevices> devices;
};

struct kiln_computation_t {
  std::unique_ptr<kiln::Module> module;
};

struct kiln_buffer_t {
  std::shared_ptr<kiln::Backend> backend;  // declared first: outlives the slot's buffer
  std::shared_ptr<const kiln::capi::ClientDevices> devices;

  // The slot, or FAILED_PRECONDITION from `function` when the buffer was
  // donated to an execution.
  kiln::StatusOr<std::shared_ptr<kiln::capi::BufferSlot>> Slot(const char* function) const;
  // The slot's data once ready: waits for it; the error of the execution that
  // was to fill it when that failed.
  kiln::StatusOr<std::shared_ptr<kiln::capi::BufferSlot>> ReadySlot(const char* function) const;
  // Hands the slot over to an execution: later calls on the handle are
  // FAILED_PRECONDITION.
  void Donate();

  mutable std::mutex mutex;  // guards slot: donation may race with reads
  std::shared_ptr<kiln::capi::BufferSlot> slot;
};

struct kiln_executable_t {
  std::shared_ptr<kiln::Backend> backend;  // declared first: outlives `executable`
  std::shared_ptr<const kiln::capi::ClientDevices> devices;
  // Shared with asynchronous executions, which may outlive the handle.
  std::shared_ptr<kiln::Executable> executable;
};

struct kiln_event_t {
  kiln::Event event;
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

// A new handle for a buffer whose data is there already, on the client
// `devices` belongs to.
std::unique_ptr<kiln_buffer_t> WrapReadyBuffer(std::shared_ptr<const ClientDevices> devices,
                                               std::unique_ptr<DeviceBuffer> buffer);

// Copies `literal` into a new buffer on `device` of that client.
Status NewBufferFromLiteral(std::shared_ptr<const ClientDevices> devices, Device* device,
                            const Literal& literal, kiln_buffer_t** out_buffer);

// A release function (memory a caller lent, a DLPack deleter) that runs
// exactly once: taken with Take() by whoever releases it later, or else when
// this goes out of scope, so that every way out of a call releases.
class ReleaseOnce {
 public:
  explicit ReleaseOnce(std::function<void()> release) : release_(std::move(release)) {}
  ~ReleaseOnce() {
    if (release_) release_();
  }
  ReleaseOnce(const ReleaseOnce&) = delete;
  ReleaseOnce& operator=(const ReleaseOnce&) = delete;
  std::function<void()> Take() { return std::exchange(release_, nullptr); }

 private:
  std::function<void()> release_;
};

// A buffer on `device` over `byte_size` bytes of host memory at `data`, read
// in place where the backend can (else copied), for `function`.
// `release` runs exactly once on every path: when the library stops reading
// the memory, or before this returns when it was copied or refused.
Status AliasHostBytes(const char* function, const kiln_device_t& device, const Shape& shape, const void* data,
                      size_t byte_size, std::function<void()> release, kiln_buffer_t** out_buffer);

// A buffer on `device` over CUDA device memory at `device_address`, read in
// place (Backend::BufferAliasingCudaMemory), for `function`; `release` runs
// exactly once on every path, as for AliasHostBytes.
Status AliasCudaMemory(const char* function, const kiln_device_t& device, const Shape& shape,
                       uint64_t device_address, std::function<void()> release, kiln_buffer_t** out_buffer);

// A literal of `shape` copied from row-major host bytes (byte size checked;
// PRED bytes normalised to 0/1).
StatusOr<Literal> LiteralFromHost(const char* function, const Shape& shape, const void* data,
                                  size_t byte_size);

}  // namespace kiln::capi
