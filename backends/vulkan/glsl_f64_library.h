// Kiln's f64 elementary functions in GLSL, whose own exp, log, sin and the
// rest take float only: range reduction and polynomials in double
// arithmetic, straight-line code (no loops, which lavapipe counts against
// its per-invocation limit). About 1e-15 relative error for normal
// arguments; sin, cos and tan reduce by pi/2 in three parts below 1e6 and
// from the bits of 2/pi beyond (k_dreduce). The f64 and c128 ops of
// glsl_ops.cc call them.
#pragma once

#include "backends/vulkan/glsl_types.h"

namespace kiln::vulkan {

// Adds the library to the prelude once, as one helper after the bits of
// 2/pi it reduces by (NeedTwoOverPiBits): double k_dexp(double),
// k_dexpm1, k_dlog, k_dlog1p, k_dlogistic, k_dsin, k_dcos, k_dtan,
// k_dtanh, k_dcbrt and k_derf of one double; double k_datan2(double y,
// double x) and k_dpow(double x, double y); and void k_dsincos(double x,
// out double s, out double c), both from one reduction.
void NeedF64Library(GlslPrelude& prelude);

}  // namespace kiln::vulkan
