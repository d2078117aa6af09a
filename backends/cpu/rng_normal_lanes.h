// Box-Muller over whole arrays of units in vector lanes (Highway), for the
// rng thunk's normal samples.
#pragma once

#include <cstdint>

#include "backends/cpu/rng_bit_generator_thunk.h"

namespace kiln::cpu {

// out[i] = mean + deviation * sqrt(-2 log(1 - first_units[i])) *
// cos(2 pi second_units[i]) for i < count, the units in [0, 1). log and cos
// are Highway's (at most 4 and 3 ulp from exact), not libm's.
using RngBoxMullerFunction = void (*)(const double* first_units, const double* second_units, int64_t count,
                                      double mean, double deviation, double* out);

// The vector code of `isa` when the CPU has it (kBaseline: the build's
// baseline ISA), else of the best instruction set it has.
RngBoxMullerFunction RngBoxMullerFor(RngVectorIsa isa);

}  // namespace kiln::cpu
