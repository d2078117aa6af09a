// Kiln's own exp, expm1, log, log1p and pow for f32 (and for f16 and bf16,
// which compute in float) in GLSL. Vulkan bounds GLSL's exp only to
// 3 + 2|x| ulps, its log to 2^-21 absolute in [0.5, 2] (log(1 + 1e-4) may
// be 0.5% off) and its pow by exp2's bound on y log2(x), which grows with
// the result's exponent (lavapipe's pow was 149 ulps off, its exp gave
// exp(-100) = 0); exp(x) - 1 and log(1 + x) lose x's digits near 0. These
// keep subnormal arguments and results whether or not the device flushes
// them; on lavapipe exp, log and pow were within 1.09, 0.71 and 1.86 ulps
// of the correctly rounded result (tests/vulkan/f32_accuracy_test.cc).
#pragma once

#include <string>

#include "backends/vulkan/glsl_types.h"

namespace kiln::vulkan {

// Each adds the helper of its name (k_exp_$N, ..., $N the type's name)
// and the helpers it calls to the prelude, once, and returns its call on
// `args`, a GLSL argument list: one value for all but pow, (x, y) for pow
// (C's pow: negative bases with integer exponents, zero and infinite
// bases). `type` is f32, f16 or bf16.
std::string F32ExpCall(GlslPrelude& prelude, ElementType type, const std::string& args);
std::string F32Expm1Call(GlslPrelude& prelude, ElementType type, const std::string& args);
std::string F32LogCall(GlslPrelude& prelude, ElementType type, const std::string& args);
std::string F32Log1pCall(GlslPrelude& prelude, ElementType type, const std::string& args);
std::string F32PowCall(GlslPrelude& prelude, ElementType type, const std::string& args);

}  // namespace kiln::vulkan
