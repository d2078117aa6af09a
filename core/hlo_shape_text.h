// Shapes in HLO text: `f32[2,3]{1,0}`, `(f32[], (s32[2], pred[]))`,
// `token[]`, layouts with tiling suffixes `{1,0:T(8,128)}` (tiles ignored).
#pragma once

#include <string>

#include "core/hlo_lexer.h"
#include "core/shape.h"
#include "core/status.h"

namespace kiln {

// Deepest tuple nesting accepted, so hostile input cannot exhaust the stack.
inline constexpr int kMaxHloNesting = 64;

// True when a shape (not a name) starts at the cursor: `(` or a type name
// directly followed by `[`.
bool ShapeStartsHere(HloLexer& lexer);

// Parses a shape; layouts default to major-to-minor when not written.
StatusOr<Shape> ParseShapeText(HloLexer& lexer);

// XLA's spelling; scalars print without `{}`, layouts only when asked.
std::string PrintShapeText(const Shape& shape, bool print_layout);
// PrintShapeText appended to `text` (no temporary string).
void AppendShapeText(std::string& text, const Shape& shape, bool print_layout);

}  // namespace kiln
