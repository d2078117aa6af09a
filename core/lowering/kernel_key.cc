#include "core/lowering/kernel_key.h"

#include "core/hlo_printer.h"

namespace kiln {

std::string KernelKey(const Computation& computation) {
  // Printed in place with positional names: no copy of the computation (a
  // copy per kernel allocated every instruction again, about a tenth of a
  // 400k-instruction compile).
  PrintOptions options;
  options.positional_names = true;
  std::string text = PrintComputation(computation, options);
  // The text starts with the computation's name; every kernel is "kernel".
  text.replace(0, computation.name().size(), "kernel");
  return text;
}

}  // namespace kiln
