// Prints the IR as XLA HLO text (the format XLA itself prints), such that
// ParseHloModule(PrintModule(m)) yields an equivalent module and printing it
// again gives the same text.
#pragma once

#include <string>

#include "core/ir.h"

namespace kiln {

struct PrintOptions {
  bool print_layouts = true;         // "f32[2,3]{1,0}"
  bool print_operand_shapes = true;  // "add(f32[2] x, f32[2] y)" vs "add(x, y)"
  // Instructions print as their positions in their computation ("v0", "v1",
  // ...) instead of their names (PrintComputation and PrintModule; a lone
  // PrintInstruction keeps the names): text that computations differing only
  // in their instructions' names share (core/lowering/kernel_key.h).
  bool positional_names = false;
};

std::string PrintModule(const Module& module, const PrintOptions& options = {});
std::string PrintComputation(const Computation& computation, const PrintOptions& options = {});
std::string PrintInstruction(const Instruction& instruction, const PrintOptions& options = {});

}  // namespace kiln
