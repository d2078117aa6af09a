// Parses XLA HLO text (as printed by XLA and by JAX's
// `.lower(...).as_text(dialect="hlo")`) into a verified Module.
#pragma once

#include <memory>
#include <string_view>

#include "core/ir.h"
#include "core/status.h"

namespace kiln {

// Errors are INVALID_ARGUMENT with "line L, column C: ..." naming what was
// expected. Shapes written in the text are checked against shape inference.
StatusOr<std::unique_ptr<Module>> ParseHloModule(std::string_view text);

}  // namespace kiln
