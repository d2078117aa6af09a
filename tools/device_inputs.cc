#include "tools/device_inputs.h"

#include <string>

namespace kiln::tool {

StatusOr<DeviceInputs> UploadInputs(Backend& backend, const std::vector<Literal>& inputs) {
  if (backend.devices().empty()) return FailedPrecondition("backend '", backend.name(), "' has no device");
  Device* device = backend.devices()[0];
  DeviceInputs uploaded;
  for (const Literal& input : inputs) {
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<DeviceBuffer> buffer, backend.BufferFromLiteral(input, device));
    uploaded.pointers.push_back(buffer.get());
    uploaded.buffers.push_back(std::move(buffer));
  }
  return uploaded;
}

StatusOr<std::vector<Literal>> DownloadResults(const Backend& backend,
                                               const std::vector<std::unique_ptr<DeviceBuffer>>& buffers) {
  std::vector<Literal> results;
  for (const auto& buffer : buffers) {
    if (buffer == nullptr) return Internal("backend '", backend.name(), "' returned a null result buffer");
    KILN_ASSIGN_OR_RETURN(Literal result, buffer->ToLiteral());
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace kiln::tool
