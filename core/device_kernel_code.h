// What Kiln checks of the code of a registered op's device kernel when it is
// registered, before any device is opened: that SPIR-V is a module of 32-bit
// words with SPIR-V's magic number and a GLCompute entry point of the given
// name, and that PTX is text with `.version`, `.target` and an `.entry` of
// the given name. The backends check the rest when they compile (the
// SPIR-V validator on vulkan, the driver's JIT on cuda).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace kiln {

// The names of the GLCompute entry points of SPIR-V `code`; INVALID_ARGUMENT
// naming `op` when it is not a SPIR-V module (size, magic number, a word
// count that leaves the module).
StatusOr<std::vector<std::string>> SpirvComputeEntryPoints(std::string_view op,
                                                           std::span<const uint8_t> code);

// The names of the `.entry` kernels of PTX `code`; INVALID_ARGUMENT naming
// `op` when it is not PTX text (a NUL inside, no `.version` or `.target`).
StatusOr<std::vector<std::string>> PtxEntryPoints(std::string_view op, std::span<const uint8_t> code);

// Checks `code` for `backend` ("vulkan": SPIR-V, "cuda": PTX) and that
// `entry` is one of its entry points: INVALID_ARGUMENT for code that is not
// of the backend's kind, NOT_FOUND naming the entry points there are.
Status CheckDeviceKernelCode(std::string_view op, std::string_view backend, std::span<const uint8_t> code,
                             std::string_view entry);

}  // namespace kiln
