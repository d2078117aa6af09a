// What the Backend interface implements for every backend that does not
// override it.
#include "core/backend.h"

#include <cstdint>
#include <span>

namespace kiln {

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

}  // namespace kiln
