#include "core/lowering/kernel_key.h"

#include <memory>
#include <unordered_map>

#include "core/hlo_printer.h"

namespace kiln {

std::string KernelKey(const Computation& computation) {
  Computation renamed("kernel");
  std::unordered_map<const Instruction*, Instruction*> copies;
  for (const auto& instruction : computation.instructions()) {
    auto copy = std::make_unique<Instruction>(*instruction);
    for (Instruction*& operand : copy->operands) operand = copies.at(operand);
    copy->name = "v" + std::to_string(copies.size());
    copies[instruction.get()] = renamed.AddInstruction(std::move(copy));
  }
  if (computation.root() != nullptr) renamed.set_root(copies.at(computation.root()));
  return PrintComputation(renamed);
}

}  // namespace kiln
