// Device buffers: from host memory, shape queries, back to host memory.
#include <algorithm>
#include <cstring>
#include <optional>

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

}  // namespace

extern "C" {

kiln_status_t* kiln_client_buffer_from_host(kiln_client_t* client, kiln_element_type_t type,
                                            const int64_t* dims, size_t rank, const int64_t* minor_to_major,
                                            const void* data, size_t byte_size, kiln_buffer_t** out_buffer) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(client);
    KILN_CAPI_CHECK_NOT_NULL(out_buffer);
    KILN_ASSIGN_OR_RETURN(kiln::Shape shape,
                          kiln::capi::ArrayShape(kiln_capi_function, type, dims, rank, minor_to_major));
    KILN_ASSIGN_OR_RETURN(kiln::Literal literal,
                          kiln::capi::LiteralFromHost(kiln_capi_function, shape, data, byte_size));
    kiln::Device* device = client->backend->devices()[0];
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<kiln::DeviceBuffer> device_buffer,
                          client->backend->BufferFromLiteral(literal, device));
    auto buffer = std::make_unique<kiln_buffer_t>();
    buffer->backend = client->backend;
    buffer->buffer = std::move(device_buffer);
    *out_buffer = buffer.release();
    return kiln::OkStatus();
  });
}

void kiln_buffer_destroy(kiln_buffer_t* buffer) { delete buffer; }

kiln_status_t* kiln_buffer_element_type(const kiln_buffer_t* buffer, kiln_element_type_t* out_type) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(buffer);
    KILN_CAPI_CHECK_NOT_NULL(out_type);
    *out_type = static_cast<kiln_element_type_t>(buffer->buffer->shape().element_type());
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_buffer_rank(const kiln_buffer_t* buffer, size_t* out_rank) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(buffer);
    KILN_CAPI_CHECK_NOT_NULL(out_rank);
    *out_rank = buffer->buffer->shape().dimensions().size();
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_buffer_dimensions(const kiln_buffer_t* buffer, int64_t* dims, size_t dims_capacity) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(buffer);
    return CopyOut(kiln_capi_function, "dims", buffer->buffer->shape().dimensions(), dims, dims_capacity);
  });
}

kiln_status_t* kiln_buffer_minor_to_major(const kiln_buffer_t* buffer, int64_t* minor_to_major,
                                          size_t capacity) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(buffer);
    const kiln::Shape& shape = buffer->buffer->shape();
    std::vector<int64_t> order = shape.layout().minor_to_major;
    if (order.empty()) order = kiln::DefaultLayout(shape.rank()).minor_to_major;
    return CopyOut(kiln_capi_function, "minor_to_major", order, minor_to_major, capacity);
  });
}

kiln_status_t* kiln_buffer_byte_size(const kiln_buffer_t* buffer, size_t* out_byte_size) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(buffer);
    KILN_CAPI_CHECK_NOT_NULL(out_byte_size);
    *out_byte_size = HostByteSize(buffer->buffer->shape());
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_buffer_to_host(const kiln_buffer_t* buffer, void* dst, size_t dst_byte_size) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(buffer);
    const kiln::Shape& shape = buffer->buffer->shape();
    const size_t expected = HostByteSize(shape);
    if (dst_byte_size != expected) {
      return kiln::InvalidArgument(kiln_capi_function, ": buffer of ", shape.ToString(), " needs ", expected,
                                   " bytes, got dst_byte_size ", dst_byte_size);
    }
    if (expected == 0) return kiln::OkStatus();
    KILN_CAPI_CHECK_NOT_NULL(dst);
    KILN_ASSIGN_OR_RETURN(kiln::Literal literal, buffer->buffer->ToLiteral());
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
    kiln::Literal literal = *std::move(read);
    kiln::Device* device = client->backend->devices()[0];
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<kiln::DeviceBuffer> device_buffer,
                          client->backend->BufferFromLiteral(literal, device));
    auto buffer = std::make_unique<kiln_buffer_t>();
    buffer->backend = client->backend;
    buffer->buffer = std::move(device_buffer);
    *out_buffer = buffer.release();
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_buffer_to_npy_file(const kiln_buffer_t* buffer, const char* path) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(buffer);
    KILN_CAPI_CHECK_NOT_NULL(path);
    KILN_ASSIGN_OR_RETURN(kiln::Literal literal, buffer->buffer->ToLiteral());
    return kiln::WriteNpyFile(literal, path);
  });
}

}  // extern "C"
