// Kiln's own f32 sine, cosine, tangent and arctangent in GLSL. Vulkan
// promises GLSL's sin and cos only 2^-11 absolute error in [-pi, pi] (and
// nothing beyond), atan 4096 ulps: NVIDIA's driver (580.159) gave
// sin(1e-6) = 9.363e-7 and tan(1e-5) = 9.925e-6, where XLA's GPU backend
// is within an ulp or two. These reduce the argument by pi/2 exactly for
// every finite f32 (Payne and Hanek's method in integer arithmetic) and
// evaluate polynomials on [-pi/4, pi/4] (Taylor's for sine and cosine, a
// fitted one for tangent), so they are exact relative to the result near
// 0; quotients are corrected for what the division left out (Vulkan lets
// it be 2.5 ulps off). On lavapipe, over 372k arguments from 2^-40 to
// 2^127 and around multiples of pi/2, sine and cosine were at most 0.77
// ulps off the correctly rounded result and tangent 1.19; atan2 (over
// k_fatanq) 1.11 over 200k pairs (tests/vulkan/f32_accuracy_test.cc).
#pragma once

#include "backends/vulkan/glsl_types.h"

namespace kiln::vulkan {

// Adds uint k_2opi_at(int j), word j (0 <= j < 64) of two zero words and
// then the first 1280 bits of 2/pi, and void k_2opi_window(int bit, out
// uint w0, out uint w1, out uint w2, out uint w3), the four words of 32
// bits from bit `bit` of those on, to the prelude (the f64 library's
// reduction; the f32 functions have a shorter table of their own).
void NeedTwoOverPiBits(GlslPrelude& prelude);

// Adds float k_fsin(float), k_fcos(float), k_ftan(float) and
// void k_fsincos(float x, out float s, out float c) to the prelude.
void NeedF32Trig(GlslPrelude& prelude);

// Adds float k_fproduct_error(float a, float b, float p): a b - p exactly
// for p = a b rounded (Dekker's product), where nothing overflows or
// underflows.
void NeedF32ProductError(GlslPrelude& prelude);

// Adds float k_fatanq(float n, float d), atan(n / d) for 0 <= n <= d (n
// finite), to the prelude.
void NeedF32Atan(GlslPrelude& prelude);

}  // namespace kiln::vulkan
