// What the Backend interface implements for every backend that does not
// override it.
#include "core/backend.h"

#include <cstdint>
#include <span>

namespace kiln {

StatusOr<std::unique_ptr<Executable>> Backend::CompileModule(std::unique_ptr<Module> module,
                                                             const CompileOptions& options) {
  if (module == nullptr) return InvalidArgument(name(), ": no module to compile");
  return Compile(*module, options);
}

StatusOr<std::unique_ptr<DeviceBuffer>> Backend::BufferAliasingHost(const Shape& shape, const void* data,
                                                                    std::function<void()> release,
                                                                    Device* device) {
  // Release before anything can fail, as promised: the copy below is all
  // that reads `data`.
  StatusOr<Literal> literal = Literal::FromBytes(
      shape,
      std::span<const uint8_t>(static_cast<const uint8_t*>(data), static_cast<size_t>(shape.byte_size())));
  if (release) release();
  if (!literal.ok()) return literal.status();
  return BufferFromLiteral(*literal, device);
}

StatusOr<std::unique_ptr<DeviceBuffer>> Backend::BufferAliasingCudaMemory(const Shape& shape,
                                                                          uint64_t address,
                                                                          std::function<void()> release,
                                                                          Device* device) {
  (void)shape;
  (void)address;
  (void)device;
  if (release) release();
  return InvalidArgument("the ", name(),
                         " backend cannot read CUDA device memory; make the buffer on a device of a "
                         "\"cuda\" client");
}

}  // namespace kiln
