// Constant values in HLO text: `1`, `{1, 2}`, `{ {1, 2}, {3, 4} }`, `true`,
// `nan`, `-inf`, complex `(1, 2)`, tuples `({1, 2}, 3)`. Floats print in the
// shortest form that reads back to the same bits.
#pragma once

#include <string>

#include "core/hlo_lexer.h"
#include "core/literal.h"
#include "core/shape.h"
#include "core/status.h"

namespace kiln {

// Parses the body of `constant(...)` (without the parentheses) for `shape`;
// the literal gets `shape`'s layout.
StatusOr<Literal> ParseLiteralText(HloLexer& lexer, const Shape& shape);

std::string PrintLiteralText(const Literal& literal);

// Shortest text that reads back to exactly `value` (nan/inf spelled as XLA does).
std::string FormatFloatExactly(float value);
std::string FormatFloatExactly(double value);

}  // namespace kiln
