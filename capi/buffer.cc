// Device buffers: from host memory, shape queries, back to host memory.
#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <utility>

#include "capi/internal.h"
#include "core/npy.h"

using kiln::Status;
using kiln::capi::Guard;

namespace {

// Writes `values` to out[0..n) after checking the caller's capacity.
Status CopyOut(const char* function, const char* what, const std::vector<int64_t>& values, int64_t* out,
               size_t capacity) {
  if (capacity < values.size()) {
    return kiln::InvalidArgument(function, ": capacity ", capacity, " is too small for the ", values.size(),
                                 " ", what);
  }
  if (values.empty()) return kiln::OkStatus();
  if (out == nullptr) return kiln::capi::NullArgument(function, what);
  std::copy(values.begin(), values.end(), out);
  return kiln::OkStatus();
}

size_t HostByteSize(const kiln::Shape& shape) {
  return static_cast<size_t>(shape.element_count()) *
         static_cast<size_t>(kiln::ByteWidth(shape.element_type()));
}

// Copies host bytes into a new buffer on `device` of the client `devices`
// belongs to.
Status BufferFromHost(const char* function, std::shared_ptr<const kiln::capi::ClientDevices> devices,
                      kiln::Device* device, kiln_element_type_t type, const int64_t* dims, size_t rank,
                      const int64_t* minor_to_major, const void* data, size_t byte_size,
                      kiln_buffer_t** out_buffer) {
  KILN_ASSIGN_OR_RETURN(kiln::Shape shape,
                        kiln::capi::ArrayShape(function, type, dims, rank, minor_to_major));
  KILN_ASSIGN_OR_RETURN(kiln::Literal literal, kiln::capi::LiteralFromHost(function, shape, data, byte_size));
  return kiln::capi::NewBufferFromLiteral(std::move(devices), device, literal, out_buffer);
}

}  // namespace

namespace kiln::capi {

std::unique_ptr<kiln_buffer_t> WrapReadyBuffer(std::shared_ptr<const ClientDevices> devices,
                                               std::unique_ptr<DeviceBuffer> buffer) {
  auto slot = std::make_shared<BufferSlot>(buffer->shape(), buffer->device(), Event::Ready());
  slot->buffer = std::move(buffer);
  auto handle = std::make_unique<kiln_buffer_t>();
  handle->backend = devices->backend;
  handle->devices = std::move(devices);
  handle->slot = std::move(slot);
  return handle;
}

Status NewBufferFromLiteral(std::shared_ptr<const ClientDevices> devices, Device* device,
                            const Literal& literal, kiln_buffer_t** out_buffer) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<DeviceBuffer> buffer,
                        devices->backend->BufferFromLiteral(literal, device));
  *out_buffer = WrapReadyBuffer(std::move(devices), std::move(buffer)).release();
  return OkStatus();
}

Status AliasHostBytes(const char* function, const kiln_device_t& device, const Shape& shape, const void* data,
                      size_t byte_size, std::function<void()> release, kiln_buffer_t** out_buffer) {
  // Whatever happens below, `release` runs once: handed to the backend, or
  // when this returns.
  ReleaseOnce pending(std::move(release));
  std::shared_ptr<const ClientDevices> devices = device.owner->shared_from_this();
  const size_t expected = HostByteSize(shape);
  if (byte_size != expected) {
    return InvalidArgument(function, ": ", shape.ToString(), " needs ", expected, " bytes, got byte_size ",
                           byte_size);
  }
  if (shape.element_type() == ElementType::kPred || expected == 0) {
    // PRED bytes are normalised to 0 and 1 on the way in, so they are copied.
    KILN_ASSIGN_OR_RETURN(Literal literal, LiteralFromHost(function, shape, data, byte_size));
    return NewBufferFromLiteral(std::move(devices), device.device, literal, out_buffer);
  }
  if (data == nullptr) return NullArgument(function, "data");
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<DeviceBuffer> aliased,
                        devices->backend->BufferAliasingHost(shape, data, pending.Take(), device.device));
  *out_buffer = WrapReadyBuffer(std::move(devices), std::move(aliased)).release();
  return OkStatus();
}

Status AliasCudaMemory(const char* function, const kiln_device_t& device, const Shape& shape,
                       uint64_t device_address, std::function<void()> release, kiln_buffer_t** out_buffer) {
  ReleaseOnce pending(std::move(release));
  std::shared_ptr<const ClientDevices> devices = device.owner->shared_from_this();
  StatusOr<std::unique_ptr<DeviceBuffer>> aliased =
      devices->backend->BufferAliasingCudaMemory(shape, device_address, pending.Take(), device.device);
  if (!aliased.ok())
    return Status(aliased.status().code(), internal::StrCat(function, ": ", aliased.status().message()));
  *out_buffer = WrapReadyBuffer(std::move(devices), std::move(*aliased)).release();
  return OkStatus();
}

}  // namespace kiln::capi

kiln::StatusOr<std::shared_ptr<kiln::capi::BufferSlot>> kiln_buffer_t::Slot(const char* function) const {
  const std::lock_guard<std::mutex> lock(mutex);
  if (slot == nullptr) {
    return kiln::FailedPrecondition(function,
                                    ": the buffer was donated to an execution (kiln_execute_options_t."
                                    "donated_arguments); use that execution's results, and only "
                                    "kiln_buffer_destroy this handle");
  }
  return slot;
}

kiln::StatusOr<std::shared_ptr<kiln::capi::BufferSlot>> kiln_buffer_t::ReadySlot(const char* function) const {
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<kiln::capi::BufferSlot> ready, Slot(function));
  if (Status filled = ready->ready.Await(); !filled.ok()) {
    return Status(filled.code(),
                  kiln::internal::StrCat(function,
                                         ": the buffer holds no data because the execution that "
                                         "was to fill it failed: ",
                                         filled.message()));
  }
  return ready;
}

void kiln_buffer_t::Donate() {
  const std::lock_guard<std::mutex> lock(mutex);
  slot.reset();
}

extern "C" {

kiln_status_t* kiln_client_buffer_from_host(kiln_client_t* client, kiln_element_type_t type,
                                            const int64_t* dims, size_t rank, const int64_t* minor_to_major,
                                            const void* data, size_t byte_size, kiln_buffer_t** out_buffer) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(client);
    KILN_CAPI_CHECK_NOT_NULL(out_buffer);
    return BufferFromHost(kiln_capi_function, client->devices, client->backend->devices()[0], type, dims,
                          rank, minor_to_major, data, byte_size, out_buffer);
  });
}

kiln_status_t* kiln_device_buffer_from_host(kiln_device_t* device, kiln_element_type_t type,
                                            const int64_t* dims, size_t rank, const int64_t* minor_to_major,
                                            const void* data, size_t byte_size, kiln_buffer_t** out_buffer) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(device);
    KILN_CAPI_CHECK_NOT_NULL(out_buffer);
    std::shared_ptr<const kiln::capi::ClientDevices> devices = device->owner->shared_from_this();
    return BufferFromHost(kiln_capi_function, devices, device->device, type, dims, rank, minor_to_major, data,
                          byte_size, out_buffer);
  });
}

kiln_status_t* kiln_device_buffer_alias_host(kiln_device_t* device, kiln_element_type_t type,
                                             const int64_t* dims, size_t rank, const void* data,
                                             size_t byte_size, kiln_host_release_fn release, void* user_data,
                                             kiln_buffer_t** out_buffer) {
  // Made before the guard so that even a failure to allocate the status
  // releases the memory first.
  kiln::capi::ReleaseOnce release_once(release == nullptr ? std::function<void()>()
                                                          : [release, user_data] { release(user_data); });
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(device);
    KILN_CAPI_CHECK_NOT_NULL(out_buffer);
    KILN_ASSIGN_OR_RETURN(kiln::Shape shape, kiln::capi::ArrayShape(kiln_capi_function, type, dims, rank));
    return kiln::capi::AliasHostBytes(kiln_capi_function, *device, shape, data, byte_size,
                                      release_once.Take(), out_buffer);
  });
}

kiln_status_t* kiln_device_buffer_alias_cuda_memory(kiln_device_t* device, kiln_element_type_t type,
                                                    const int64_t* dims, size_t rank, uint64_t device_address,
                                                    kiln_host_release_fn release, void* user_data,
                                                    kiln_buffer_t** out_buffer) {
  // Made before the guard, as for host memory: every way out releases.
  kiln::capi::ReleaseOnce release_once(release == nullptr ? std::function<void()>()
                                                          : [release, user_data] { release(user_data); });
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(device);
    KILN_CAPI_CHECK_NOT_NULL(out_buffer);
    KILN_ASSIGN_OR_RETURN(kiln::Shape shape, kiln::capi::ArrayShape(kiln_capi_function, type, dims, rank));
    return kiln::capi::AliasCudaMemory(kiln_capi_function, *device, shape, device_address,
                                       release_once.Take(), out_buffer);
  });
}

kiln_status_t* kiln_buffer_cuda_memory(const kiln_buffer_t* buffer, int* out_ordinal,
                                       uint64_t* out_device_address) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(buffer);
    KILN_CAPI_CHECK_NOT_NULL(out_ordinal);
    KILN_CAPI_CHECK_NOT_NULL(out_device_address);
    KILN_ASSIGN_OR_RETURN(auto slot, buffer->ReadySlot(kiln_capi_function));
    const std::optional<kiln::GpuMemoryAddress> memory = slot->buffer->cuda_memory();
    if (!memory.has_value()) {
      return kiln::InvalidArgument(kiln_capi_function, ": the buffer is on the ", buffer->backend->name(),
                                   " backend, not in CUDA device memory (kiln_buffer_to_host or "
                                   "kiln_buffer_to_dlpack read it)");
    }
    *out_ordinal = memory->ordinal;
    *out_device_address = memory->address;
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_buffer_is_host_alias(const kiln_buffer_t* buffer, int* out_is_alias) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(buffer);
    KILN_CAPI_CHECK_NOT_NULL(out_is_alias);
    KILN_ASSIGN_OR_RETURN(auto slot, buffer->ReadySlot(kiln_capi_function));
    *out_is_alias = slot->buffer->aliases_host() ? 1 : 0;
    return kiln::OkStatus();
  });
}

void kiln_buffer_destroy(kiln_buffer_t* buffer) { delete buffer; }

kiln_status_t* kiln_buffer_device(const kiln_buffer_t* buffer, kiln_device_t** out_device) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(buffer);
    KILN_CAPI_CHECK_NOT_NULL(out_device);
    KILN_ASSIGN_OR_RETURN(auto slot, buffer->Slot(kiln_capi_function));
    kiln_device_t* handle = buffer->devices->Find(slot->device);
    if (handle == nullptr) return kiln::Internal(kiln_capi_function, ": the buffer's device has no handle");
    *out_device = handle;
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_buffer_copy_to_device(kiln_buffer_t* buffer, kiln_device_t* device,
                                          kiln_buffer_t** out_buffer) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(buffer);
    KILN_CAPI_CHECK_NOT_NULL(device);
    KILN_CAPI_CHECK_NOT_NULL(out_buffer);
    if (device->owner != buffer->devices.get()) {
      return kiln::InvalidArgument(kiln_capi_function,
                                   ": the device belongs to another client than the buffer (take it from "
                                   "kiln_client_device of the buffer's client)");
    }
    KILN_ASSIGN_OR_RETURN(auto slot, buffer->ReadySlot(kiln_capi_function));
    KILN_ASSIGN_OR_RETURN(kiln::Literal literal, slot->buffer->ToLiteral());
    return kiln::capi::NewBufferFromLiteral(buffer->devices, device->device, literal, out_buffer);
  });
}

kiln_status_t* kiln_buffer_ready_event(const kiln_buffer_t* buffer, kiln_event_t** out_event) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(buffer);
    KILN_CAPI_CHECK_NOT_NULL(out_event);
    KILN_ASSIGN_OR_RETURN(auto slot, buffer->Slot(kiln_capi_function));
    *out_event = new kiln_event_t{slot->ready};
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_buffer_element_type(const kiln_buffer_t* buffer, kiln_element_type_t* out_type) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(buffer);
    KILN_CAPI_CHECK_NOT_NULL(out_type);
    KILN_ASSIGN_OR_RETURN(auto slot, buffer->Slot(kiln_capi_function));
    *out_type = static_cast<kiln_element_type_t>(slot->shape.element_type());
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_buffer_rank(const kiln_buffer_t* buffer, size_t* out_rank) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(buffer);
    KILN_CAPI_CHECK_NOT_NULL(out_rank);
    KILN_ASSIGN_OR_RETURN(auto slot, buffer->Slot(kiln_capi_function));
    *out_rank = slot->shape.dimensions().size();
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_buffer_dimensions(const kiln_buffer_t* buffer, int64_t* dims, size_t dims_capacity) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(buffer);
    KILN_ASSIGN_OR_RETURN(auto slot, buffer->Slot(kiln_capi_function));
    return CopyOut(kiln_capi_function, "dims", slot->shape.dimensions(), dims, dims_capacity);
  });
}

kiln_status_t* kiln_buffer_minor_to_major(const kiln_buffer_t* buffer, int64_t* minor_to_major,
                                          size_t capacity) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(buffer);
    KILN_ASSIGN_OR_RETURN(auto slot, buffer->Slot(kiln_capi_function));
    const kiln::Shape& shape = slot->shape;
    std::vector<int64_t> order = shape.layout().minor_to_major;
    if (order.empty()) order = kiln::DefaultLayout(shape.rank()).minor_to_major;
    return CopyOut(kiln_capi_function, "minor_to_major", order, minor_to_major, capacity);
  });
}

kiln_status_t* kiln_buffer_byte_size(const kiln_buffer_t* buffer, size_t* out_byte_size) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(buffer);
    KILN_CAPI_CHECK_NOT_NULL(out_byte_size);
    KILN_ASSIGN_OR_RETURN(auto slot, buffer->Slot(kiln_capi_function));
    *out_byte_size = HostByteSize(slot->shape);
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_buffer_to_host(const kiln_buffer_t* buffer, void* dst, size_t dst_byte_size) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(buffer);
    KILN_ASSIGN_OR_RETURN(auto slot, buffer->Slot(kiln_capi_function));
    const kiln::Shape& shape = slot->shape;
    const size_t expected = HostByteSize(shape);
    if (dst_byte_size != expected) {
      return kiln::InvalidArgument(kiln_capi_function, ": buffer of ", shape.ToString(), " needs ", expected,
                                   " bytes, got dst_byte_size ", dst_byte_size);
    }
    if (expected == 0) return kiln::OkStatus();
    KILN_CAPI_CHECK_NOT_NULL(dst);
    KILN_ASSIGN_OR_RETURN(slot, buffer->ReadySlot(kiln_capi_function));
    KILN_ASSIGN_OR_RETURN(kiln::Literal literal, slot->buffer->ToLiteral());
    if (literal.raw().size() != expected) {
      return kiln::Internal(kiln_capi_function, ": the device returned ", literal.raw().size(), " bytes for ",
                            shape.ToString(), ", expected ", expected);
    }
    std::memcpy(dst, literal.raw().data(), expected);
    return kiln::OkStatus();
  });
}

}  // extern "C"

// .npy files: the core reader/writer behind two flat functions, so bindings
// need no .npy code of their own.
extern "C" {

kiln_status_t* kiln_client_buffer_from_npy_file(kiln_client_t* client, const char* path,
                                                kiln_element_type_t expected_type,
                                                kiln_buffer_t** out_buffer) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(client);
    KILN_CAPI_CHECK_NOT_NULL(path);
    KILN_CAPI_CHECK_NOT_NULL(out_buffer);
    std::optional<kiln::ElementType> expected;
    if (expected_type != KILN_TYPE_INVALID) {
      if (expected_type < KILN_TYPE_PRED || expected_type > KILN_TYPE_C128) {
        return kiln::InvalidArgument(kiln_capi_function, ": expected_type ", expected_type,
                                     " is neither KILN_TYPE_INVALID nor an array element type");
      }
      expected = static_cast<kiln::ElementType>(expected_type);
    }
    kiln::StatusOr<kiln::Literal> read = kiln::ReadNpyFile(path, expected);
    if (!read.ok()) return read.status().WithContext(kiln_capi_function);
    return kiln::capi::NewBufferFromLiteral(client->devices, client->backend->devices()[0], *read,
                                            out_buffer);
  });
}

kiln_status_t* kiln_buffer_to_npy_file(const kiln_buffer_t* buffer, const char* path) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(buffer);
    KILN_CAPI_CHECK_NOT_NULL(path);
    KILN_ASSIGN_OR_RETURN(auto slot, buffer->ReadySlot(kiln_capi_function));
    KILN_ASSIGN_OR_RETURN(kiln::Literal literal, slot->buffer->ToLiteral());
    return kiln::WriteNpyFile(literal, path);
  });
}

}  // extern "C"
