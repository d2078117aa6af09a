// `kiln run --random-inputs`: values for every ENTRY parameter leaf from a
// seeded generator, the same on every machine for the same seed.
#pragma once

#include <cstdint>
#include <vector>

#include "core/literal.h"
#include "core/shape.h"

namespace kiln::tool {

// One literal per leaf, in order, carrying the leaf's layout: floats uniform in
// [-1, 1) (both parts of complex numbers), signed integers in [-8, 8),
// unsigned integers in [0, 16), PRED false or true. Leaves that are not arrays
// (tokens) get their empty value.
std::vector<Literal> RandomInputs(const std::vector<Shape>& parameter_leaves, uint64_t seed);

}  // namespace kiln::tool
