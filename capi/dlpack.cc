// DLPack export and import: Kiln buffers as DLPack tensors (versioned 1.x and
// legacy) and DLPack tensors as Kiln buffers, without copying where the
// memory is host memory both sides can read, or CUDA device memory
// (kDLCUDA) of a cuda client's GPU.
#include <cstring>
#include <new>
#include <optional>

#include "capi/dlpack_abi.h"
#include "capi/internal.h"

using kiln::ElementType;
using kiln::Status;
using kiln::StatusOr;
using kiln::capi::Guard;

namespace {

// Kiln's element types and their DLPack dtypes (lanes = 1), both ways.
struct DlpackType {
  uint8_t code;
  uint8_t bits;
  ElementType type;
};
constexpr DlpackType kDlpackTypes[] = {
    {kiln::capi::kDlpackBoolCode, 8, ElementType::kPred},
    {kDLInt, 8, ElementType::kS8},
    {kDLInt, 16, ElementType::kS16},
    {kDLInt, 32, ElementType::kS32},
    {kDLInt, 64, ElementType::kS64},
    {kDLUInt, 8, ElementType::kU8},
    {kDLUInt, 16, ElementType::kU16},
    {kDLUInt, 32, ElementType::kU32},
    {kDLUInt, 64, ElementType::kU64},
    {kDLFloat, 16, ElementType::kF16},
    {kDLFloat, 32, ElementType::kF32},
    {kDLFloat, 64, ElementType::kF64},
    {kDLBfloat, 16, ElementType::kBF16},
    {kDLComplex, 64, ElementType::kC64},
    {kDLComplex, 128, ElementType::kC128},
};

std::optional<DLDataType> ToDlpack(ElementType type) {
  for (const DlpackType& entry : kDlpackTypes) {
    if (entry.type == type) return DLDataType{entry.code, entry.bits, 1};
  }
  return std::nullopt;
}

StatusOr<ElementType> FromDlpack(const char* function, DLDataType type) {
  if (type.lanes != 1) {
    return kiln::InvalidArgument(function, ": dtype has ", type.lanes,
                                 " lanes; Kiln arrays hold one value per element (lanes = 1)");
  }
  for (const DlpackType& entry : kDlpackTypes) {
    if (entry.code == type.code && entry.bits == type.bits) return entry.type;
  }
  return kiln::InvalidArgument(function, ": dtype (code ", static_cast<int>(type.code), ", ",
                               static_cast<int>(type.bits),
                               " bits) has no Kiln element type (Kiln has bool, 8 to 64-bit integers, f16, "
                               "bf16, f32, f64, c64 and c128)");
}

// What an exported tensor owns: the buffer's memory (its slot, or a host
// copy), the shape and strides arrays, and the struct handed out.
struct Export {
  std::shared_ptr<kiln::Backend> backend;  // first: outlives the slot's buffer
  std::shared_ptr<kiln::capi::BufferSlot> slot;
  std::vector<uint8_t> copy;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DLManagedTensorVersioned versioned = {};
  DLManagedTensor legacy = {};
};

// Fills `tensor` from `buffer`, ready, pointing at its own memory where it
// is host memory or CUDA device memory (kDLCUDA), else at a host copy.
// Returns whether it was copied.
StatusOr<bool> Describe(const char* function, kiln_buffer_t& buffer, Export& out, DLTensor& tensor) {
  KILN_ASSIGN_OR_RETURN(out.slot, buffer.ReadySlot(function));
  out.backend = buffer.backend;
  const kiln::Shape& shape = out.slot->shape;
  const std::optional<DLDataType> dtype = ToDlpack(shape.element_type());
  if (!dtype.has_value())
    return kiln::Unimplemented(function, ": ", shape.ToString(), " has no DLPack dtype");
  out.shape = shape.dimensions();
  out.strides.assign(out.shape.size(), 1);
  for (size_t i = out.shape.size(); i-- > 1;)
    out.strides[i - 1] = out.strides[i] * std::max<int64_t>(out.shape[i], 1);
  DLDevice device = {kDLCPU, 0};
  const void* data = out.slot->buffer->host_data();
  bool copied = false;
  if (const std::optional<kiln::GpuMemoryAddress> gpu = out.slot->buffer->cuda_memory(); gpu.has_value()) {
    // The slot (held by `out`) keeps the device memory until the deleter.
    device = {kDLCUDA, gpu->ordinal};
    data = reinterpret_cast<const void*>(static_cast<uintptr_t>(gpu->address));
  } else if (data == nullptr) {
    KILN_ASSIGN_OR_RETURN(kiln::Literal literal, out.slot->buffer->ToLiteral());
    out.copy.assign(literal.raw().begin(), literal.raw().end());
    out.slot.reset();
    data = out.copy.data();
    copied = true;
  }
  tensor.data = const_cast<void*>(data);  // DLTensor's data is not const; the flags say read-only
  tensor.device = device;
  tensor.ndim = static_cast<int32_t>(out.shape.size());
  tensor.dtype = *dtype;
  tensor.shape = out.shape.data();
  tensor.strides = out.strides.data();
  tensor.byte_offset = 0;
  return copied;
}

// A tensor's deleter as a release function (none when it has none).
template <typename Tensor>
std::function<void()> DeleterOf(Tensor* tensor) {
  if (tensor->deleter == nullptr) return {};
  return [tensor] { tensor->deleter(tensor); };
}

void DeleteVersioned(DLManagedTensorVersioned* self) { delete static_cast<Export*>(self->manager_ctx); }
void DeleteLegacy(DLManagedTensor* self) { delete static_cast<Export*>(self->manager_ctx); }

// The shape of a foreign tensor, after the checks every import makes: ndim,
// dtype, dimensions, row-major strides.
StatusOr<kiln::Shape> TensorShape(const char* function, const DLTensor& tensor) {
  if (tensor.ndim < 0 || tensor.ndim > 64) {
    return kiln::InvalidArgument(function, ": the tensor's ndim is ", tensor.ndim, " (0 to 64 are accepted)");
  }
  if (tensor.ndim > 0 && tensor.shape == nullptr)
    return kiln::capi::NullArgument(function, "dl_tensor.shape");
  KILN_ASSIGN_OR_RETURN(const ElementType type, FromDlpack(function, tensor.dtype));
  std::vector<int64_t> dims(tensor.shape, tensor.shape + tensor.ndim);
  KILN_ASSIGN_OR_RETURN(
      kiln::Shape shape,
      kiln::capi::ArrayShape(function, static_cast<kiln_element_type_t>(type), dims.data(), dims.size()));
  if (tensor.strides != nullptr) {
    // Row-major, in elements; a dimension of size 1 may carry any stride.
    int64_t expected = 1;
    for (int32_t i = tensor.ndim; i-- > 0;) {
      if (dims[static_cast<size_t>(i)] != 1 && tensor.strides[i] != expected) {
        return kiln::InvalidArgument(function, ": the tensor's strides are not row-major (dimension ", i,
                                     " has stride ", tensor.strides[i], ", row-major is ", expected,
                                     "); make it contiguous first (e.g. numpy.ascontiguousarray, "
                                     "torch.Tensor.contiguous)");
      }
      expected *= dims[static_cast<size_t>(i)];
    }
  }
  return shape;
}

// A kDLCUDA tensor read in place on `device`, which must be the cuda
// client's device of the tensor's GPU.
Status ImportCuda(const char* function, const kiln_device_t& device, const DLTensor& tensor,
                  const kiln::Shape& shape, std::function<void()> release, kiln_buffer_t** out_buffer) {
  kiln::capi::ReleaseOnce pending(std::move(release));
  const int gpu = tensor.device.device_id;
  const kiln::Backend& backend = *device.owner->backend;
  if (backend.name() != "cuda") {
    return kiln::InvalidArgument(function, ": the tensor lives on CUDA GPU ", gpu,
                                 " (kDLCUDA) and the device is ", backend.name(),
                                 "'s, which cannot read GPU memory: import it onto the ",
                                 "device of a \"cuda\" client, or copy it to the host (kDLCPU) first");
  }
  if (gpu != device.device->id()) {
    const size_t count = backend.devices().size();
    if (gpu < 0 || static_cast<size_t>(gpu) >= count) {
      return kiln::InvalidArgument(function, ": the tensor lives on CUDA GPU ", gpu,
                                   " (kDLCUDA), which this ", "cuda client does not have (it has ", count,
                                   " GPU", count == 1 ? "" : "s", ")");
    }
    return kiln::InvalidArgument(function, ": the tensor lives on CUDA GPU ", gpu,
                                 " (kDLCUDA), the device given is cuda:", device.device->id(),
                                 "; import it onto device ", gpu, " of the client");
  }
  const uint64_t address = reinterpret_cast<uintptr_t>(tensor.data) + tensor.byte_offset;
  return kiln::capi::AliasCudaMemory(function, device, shape, address, pending.Take(), out_buffer);
}

// The checks every import makes of a foreign tensor, then the import itself:
// `release` (the tensor's deleter) runs exactly once, whatever happens.
Status Import(const char* function, const kiln_device_t& device, const DLTensor& tensor,
              std::function<void()> release, kiln_buffer_t** out_buffer) {
  kiln::capi::ReleaseOnce pending(std::move(release));
  const DLDeviceType type = tensor.device.device_type;
  if (type == kDLVulkan) {
    return kiln::InvalidArgument(
        function, ": the tensor lives on Vulkan device ", tensor.device.device_id,
        " (kDLVulkan); Vulkan memory belongs to the VkDevice that allocated it and cannot be read by "
        "another library's device, so Kiln does not exchange it: copy it to the host (kDLCPU) first");
  }
  if (type != kDLCPU && type != kDLCUDAHost && type != kDLCUDA) {
    return kiln::InvalidArgument(function, ": the tensor lives on DLPack device type ",
                                 static_cast<int>(type),
                                 "; Kiln imports host memory (kDLCPU, kDLCUDAHost) and CUDA GPU memory "
                                 "(kDLCUDA, onto a \"cuda\" client's device)");
  }
  KILN_ASSIGN_OR_RETURN(const kiln::Shape shape, TensorShape(function, tensor));
  if (type == kDLCUDA) return ImportCuda(function, device, tensor, shape, pending.Take(), out_buffer);
  const auto* data = static_cast<const uint8_t*>(tensor.data);
  if (data != nullptr) data += tensor.byte_offset;
  const size_t bytes =
      static_cast<size_t>(shape.element_count()) * static_cast<size_t>(kiln::ByteWidth(shape.element_type()));
  return kiln::capi::AliasHostBytes(function, device, shape, data, bytes, pending.Take(), out_buffer);
}

}  // namespace

extern "C" {

kiln_status_t* kiln_buffer_to_dlpack_versioned(kiln_buffer_t* buffer, DLManagedTensorVersioned** out_tensor) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(buffer);
    KILN_CAPI_CHECK_NOT_NULL(out_tensor);
    auto out = std::make_unique<Export>();
    KILN_ASSIGN_OR_RETURN(const bool copied,
                          Describe(kiln_capi_function, *buffer, *out, out->versioned.dl_tensor));
    out->versioned.version = {kiln::capi::kDlpackMajor, kiln::capi::kDlpackMinor};
    out->versioned.flags = DLPACK_FLAG_BITMASK_READ_ONLY | (copied ? DLPACK_FLAG_BITMASK_IS_COPIED : 0);
    out->versioned.manager_ctx = out.get();
    out->versioned.deleter = DeleteVersioned;
    *out_tensor = &out.release()->versioned;
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_buffer_to_dlpack(kiln_buffer_t* buffer, DLManagedTensor** out_tensor) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(buffer);
    KILN_CAPI_CHECK_NOT_NULL(out_tensor);
    auto out = std::make_unique<Export>();
    KILN_ASSIGN_OR_RETURN(const bool copied,
                          Describe(kiln_capi_function, *buffer, *out, out->legacy.dl_tensor));
    (void)copied;  // the legacy struct has no flags to say so
    out->legacy.manager_ctx = out.get();
    out->legacy.deleter = DeleteLegacy;
    *out_tensor = &out.release()->legacy;
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_device_buffer_from_dlpack_versioned(kiln_device_t* device,
                                                        DLManagedTensorVersioned* tensor,
                                                        kiln_buffer_t** out_buffer) {
  if (tensor == nullptr) return kiln::capi::ToCStatus(kiln::capi::NullArgument(__func__, "tensor"));
  kiln::capi::ReleaseOnce deleter(DeleterOf(tensor));
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(device);
    KILN_CAPI_CHECK_NOT_NULL(out_buffer);
    if (tensor->version.major != kiln::capi::kDlpackMajor) {
      return kiln::InvalidArgument(kiln_capi_function, ": the tensor is DLPack ", tensor->version.major, ".",
                                   tensor->version.minor, "; this library reads DLPack ",
                                   kiln::capi::kDlpackMajor, ".x (its deleter was called)");
    }
    return Import(kiln_capi_function, *device, tensor->dl_tensor, deleter.Take(), out_buffer);
  });
}

kiln_status_t* kiln_device_buffer_from_dlpack(kiln_device_t* device, DLManagedTensor* tensor,
                                              kiln_buffer_t** out_buffer) {
  if (tensor == nullptr) return kiln::capi::ToCStatus(kiln::capi::NullArgument(__func__, "tensor"));
  kiln::capi::ReleaseOnce deleter(DeleterOf(tensor));
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(device);
    KILN_CAPI_CHECK_NOT_NULL(out_buffer);
    return Import(kiln_capi_function, *device, tensor->dl_tensor, deleter.Take(), out_buffer);
  });
}

}  // extern "C"
