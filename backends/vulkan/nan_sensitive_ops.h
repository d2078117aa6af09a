// Programs whose results depend on NaN and infinities being kept exactly,
// on devices that cannot promise it. A kernel asks the driver to keep them
// (SignedZeroInfNanPreserve, spirv_float_controls.h) for each float width
// the device allows; where it does not (no shaderSignedZeroInfNanPreserve
// for that width, VK_KHR_shader_float_controls), the driver may assume no
// NaN ever occurs and fold the tests HLO's semantics rest on (NVIDIA's
// folded `x != x`). A module holding such an op in that width is refused at
// compile time, naming the instruction and the device, unless the caller
// accepts the risk: the compile option allow_unsafe_nan_math
// (CompileOptions, kiln_compile_options_t), or KILN_VULKAN_ALLOW_NAN_UNSAFE=1
// for every compile (tools that do not expose the option).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "backends/vulkan/shader_features.h"
#include "core/ir.h"
#include "core/status.h"

namespace kiln::vulkan {

// Why `instruction`'s result depends on NaN or infinities on floats of a
// width the device does not preserve them in, or null when it does not.
const char* NanSensitivity(const Instruction& instruction, const ShaderFeatures& features);

// UNIMPLEMENTED naming the first such instruction of `module` (any
// computation: a reducer's maximum counts), its float width and `device`,
// and how to accept it; OK when there is none or `allow_unsafe`.
Status CheckNanPreservation(const Module& module, const ShaderFeatures& features, std::string_view device,
                            bool allow_unsafe);

// The opcodes of such instructions, by HLO name, each once (what the
// backend's UnsupportedOps adds).
std::vector<std::string> NanSensitiveOps(const Module& module, const ShaderFeatures& features);

// Whether KILN_VULKAN_ALLOW_NAN_UNSAFE=1.
bool NanUnsafeAllowedByEnvironment();

}  // namespace kiln::vulkan
