// Safetensors files: the core reader and writer behind flat functions, so
// bindings need no format code of their own.
#include "core/safetensors.h"

#include "capi/internal.h"

using kiln::Status;
using kiln::capi::Guard;

struct kiln_safetensors_t {
  std::unique_ptr<kiln::SafetensorsFile> file;
};

extern "C" {

kiln_status_t* kiln_safetensors_open(const char* path, kiln_safetensors_t** out_file) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(path);
    KILN_CAPI_CHECK_NOT_NULL(out_file);
    kiln::StatusOr<std::unique_ptr<kiln::SafetensorsFile>> opened = kiln::SafetensorsFile::Open(path);
    if (!opened.ok()) return opened.status().WithContext(kiln_capi_function);
    *out_file = new kiln_safetensors_t{std::move(opened).value()};
    return kiln::OkStatus();
  });
}

void kiln_safetensors_destroy(kiln_safetensors_t* file) { delete file; }

kiln_status_t* kiln_safetensors_tensor_count(const kiln_safetensors_t* file, size_t* out_count) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(file);
    KILN_CAPI_CHECK_NOT_NULL(out_count);
    *out_count = file->file->index().tensors.size();
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_safetensors_tensor_name(const kiln_safetensors_t* file, size_t index,
                                            const char** out_name) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(file);
    KILN_CAPI_CHECK_NOT_NULL(out_name);
    const auto& tensors = file->file->index().tensors;
    if (index >= tensors.size()) {
      return kiln::OutOfRange(kiln_capi_function, ": tensor index ", index, " but the file has ",
                              tensors.size(), " tensors");
    }
    *out_name = tensors[index].name.c_str();
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_safetensors_metadata(const kiln_safetensors_t* file, const char* key,
                                         const char** out_value) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(file);
    KILN_CAPI_CHECK_NOT_NULL(key);
    KILN_CAPI_CHECK_NOT_NULL(out_value);
    const auto& metadata = file->file->index().metadata;
    const auto found = metadata.find(key);
    if (found == metadata.end()) {
      return kiln::NotFound(kiln_capi_function, ": ", file->file->path(), " has no metadata entry '", key,
                            "'");
    }
    *out_value = found->second.c_str();
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_safetensors_read(kiln_safetensors_t* file, kiln_device_t* device, const char* name,
                                     kiln_buffer_t** out_buffer) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(file);
    KILN_CAPI_CHECK_NOT_NULL(device);
    KILN_CAPI_CHECK_NOT_NULL(name);
    KILN_CAPI_CHECK_NOT_NULL(out_buffer);
    kiln::StatusOr<kiln::Literal> literal = file->file->Read(name);
    if (!literal.ok()) return literal.status().WithContext(kiln_capi_function);
    return kiln::capi::NewBufferFromLiteral(device->owner->shared_from_this(), device->device, *literal,
                                            out_buffer);
  });
}

kiln_status_t* kiln_safetensors_write_file(const char* path, const char* const* names,
                                           kiln_buffer_t* const* buffers, size_t num_buffers,
                                           const char* const* metadata_keys,
                                           const char* const* metadata_values, size_t num_metadata) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(path);
    if (num_buffers != 0) {
      KILN_CAPI_CHECK_NOT_NULL(names);
      KILN_CAPI_CHECK_NOT_NULL(buffers);
    }
    if (num_metadata != 0) {
      KILN_CAPI_CHECK_NOT_NULL(metadata_keys);
      KILN_CAPI_CHECK_NOT_NULL(metadata_values);
    }
    std::vector<kiln::Literal> literals;
    literals.reserve(num_buffers);
    std::vector<std::pair<std::string, const kiln::Literal*>> tensors;
    for (size_t i = 0; i < num_buffers; ++i) {
      if (names[i] == nullptr) return kiln::InvalidArgument(kiln_capi_function, ": names[", i, "] is NULL");
      if (buffers[i] == nullptr)
        return kiln::InvalidArgument(kiln_capi_function, ": buffers[", i, "] is NULL");
      KILN_ASSIGN_OR_RETURN(auto slot, buffers[i]->ReadySlot(kiln_capi_function));
      KILN_ASSIGN_OR_RETURN(kiln::Literal literal, slot->buffer->ToLiteral());
      literals.push_back(std::move(literal));
    }
    for (size_t i = 0; i < num_buffers; ++i) tensors.emplace_back(names[i], &literals[i]);
    std::map<std::string, std::string> metadata;
    for (size_t i = 0; i < num_metadata; ++i) {
      if (metadata_keys[i] == nullptr || metadata_values[i] == nullptr)
        return kiln::InvalidArgument(kiln_capi_function, ": metadata entry ", i, " has a NULL key or value");
      if (!metadata.emplace(metadata_keys[i], metadata_values[i]).second)
        return kiln::InvalidArgument(kiln_capi_function, ": metadata key '", metadata_keys[i],
                                     "' is given twice");
    }
    kiln::Status written = kiln::WriteSafetensorsFile(path, tensors, metadata);
    return written.ok() ? written : written.WithContext(kiln_capi_function);
  });
}

}  // extern "C"
