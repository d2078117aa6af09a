// Float controls (SPIR-V 1.4 / Vulkan 1.2 execution modes) written into a
// compute shader's module after glslang: SignedZeroInfNanPreserve asks the
// device to keep IEEE NaN, infinities and signed zeros (without it a driver
// may assume no NaN ever occurs: NVIDIA's folded the NaN test `x != x` that
// jnp.argmax compiles to, so a row holding NaN chose another element), and
// DenormPreserve to keep subnormal values (without it a device may flush
// them to zero). GLSL cannot say this for two widths at once (glslang keeps
// one spirv_execution_mode per mode), so the modes are written into the
// module's words.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"

namespace kiln::vulkan {

// The float widths for which one mode is declared.
struct FloatWidths {
  bool f16 = false;
  bool f32 = false;
  bool f64 = false;
};

// What kernels ask of the device, each mode for the widths it allows.
struct FloatControls {
  FloatWidths preserve_nan_inf_signed_zero;  // SignedZeroInfNanPreserve
  FloatWidths preserve_denormals;            // DenormPreserve
};

// Every mode for every width (the code-generation tests' modules validate
// with all of them).
inline constexpr FloatControls kAllFloatControls{{true, true, true}, {true, true, true}};

// Declares each mode on the module's one entry point for 32-bit floats, and
// for 16- and 64-bit floats where the module declares those types (Float16 /
// Float64 capabilities), each only where `controls` allows it; adds each
// mode's capability once. A mode the module declares already for a width is
// left as it is. INTERNAL when the words are not a SPIR-V module with one
// entry point.
Status DeclareFloatControls(std::vector<uint32_t>& words, const FloatControls& controls);

}  // namespace kiln::vulkan
