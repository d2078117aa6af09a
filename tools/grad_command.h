// `kiln grad`: writes the reverse-mode gradient module of an HLO module
// (core/autodiff/vjp.h): the same parameters, plus one cotangent per result
// leaf unless the result is one scalar, returning the original result
// leaves followed by the gradient of each --wrt parameter.
#pragma once

#include <ostream>

#include "core/status.h"
#include "tools/command_line.h"

namespace kiln::tool {

// Parses "I,J,..." (parameter numbers, repeats allowed); INVALID_ARGUMENT
// (a usage error) for anything else.
StatusOr<std::vector<int64_t>> ParseParameterList(const std::string& text);

// Reads the module, builds its gradient module, writes it as HLO text to
// --output and prints one line saying what the written module takes and
// returns.
Status GradModule(const GradArguments& arguments, std::ostream& out);

}  // namespace kiln::tool
