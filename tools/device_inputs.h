// Moving `kiln` command inputs onto a backend's first device and results
// back to host literals.
#pragma once

#include <memory>
#include <vector>

#include "core/backend.h"
#include "core/literal.h"
#include "core/status.h"

namespace kiln::tool {

// Argument buffers on the backend's first device; `pointers` is what
// Executable::Execute takes and stays valid while this object lives.
struct DeviceInputs {
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  std::vector<DeviceBuffer*> pointers;
};

// FAILED_PRECONDITION when the backend has no device.
StatusOr<DeviceInputs> UploadInputs(Backend& backend, const std::vector<Literal>& inputs);

// INTERNAL when the backend returned a null buffer.
StatusOr<std::vector<Literal>> DownloadResults(const Backend& backend,
                                               const std::vector<std::unique_ptr<DeviceBuffer>>& buffers);

}  // namespace kiln::tool
