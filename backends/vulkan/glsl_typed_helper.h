// Helper functions whose GLSL text is written once for all the element
// types they serve, with placeholders each type fills in: one text of
// k_exp_$N serves f32, f16 and bf16 (all computed in float), one of
// k_max_$N float and double, one of k_div_$N every integer width. The
// elementwise ops (glsl_ops.cc) and the f32 exp/log family
// (glsl_f32_exp_log.cc) write their helpers this way.
#pragma once

#include <string>

#include "backends/vulkan/glsl_types.h"

namespace kiln::vulkan {

// The helper `name` with text `body`, both with their placeholders filled
// for `type` ($T its value type, $N its name, glsl_typed_helper.cc lists
// the rest), added to the prelude once (by its filled name); returns the
// call of it on `args`, a GLSL argument list.
std::string TypedHelperCall(GlslPrelude& prelude, const std::string& name, ElementType type,
                            const std::string& body, const std::string& args);

}  // namespace kiln::vulkan
