// Asks the device to keep IEEE NaN, infinities and signed zeros in a compute
// shader (SPIR-V's SignedZeroInfNanPreserve execution mode, core since SPIR-V
// 1.4 / Vulkan 1.2). Without it a driver may assume no NaN ever occurs:
// NVIDIA's folded the NaN test `x != x` that jnp.argmax compiles to, so a row
// holding NaN chose another element. GLSL cannot say this for two widths at
// once (glslang keeps one spirv_execution_mode per mode), so the mode is
// written into the module's words after glslang.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"

namespace kiln::vulkan {

// The float widths for which the device allows the mode.
struct NanPreservingWidths {
  bool f16 = false;
  bool f32 = false;
  bool f64 = false;
};

// Declares the mode on the module's one entry point for 32-bit floats, and for
// 16- and 64-bit floats where the module declares those types (Float16 /
// Float64 capabilities), each only where `widths` allows it; adds the
// capability once. A module that declares it already is left as it is for
// that width. INTERNAL when the words are not a SPIR-V module with one entry
// point.
Status PreserveNanInfSignedZero(std::vector<uint32_t>& words, const NanPreservingWidths& widths);

}  // namespace kiln::vulkan
