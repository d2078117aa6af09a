// Comparison of one result leaf of a backend with the interpreter's: exact
// leaves must be equal (floats by value, NaN equal to NaN), inexact float
// leaves within a per-type tolerance relative to |expected| plus the value's
// magnitude bound.
#pragma once

#include <optional>
#include <string>

#include "core/literal.h"
#include "tests/differential/graph_generator.h"

namespace kiln::differential {

// Relative tolerance of inexact results of `type` (0 for non-floats).
double Tolerance(ElementType type);

// A description of the first differing element, or nullopt when they match.
std::optional<std::string> LeafMismatch(const Literal& expected, const Literal& actual,
                                        const LeafCheck& check);

}  // namespace kiln::differential
