// Utilities for passes that rewrite the IR: a users table, unique names and
// instruction creation/cloning. Computation itself offers the primitive edits
// (ReplaceAllUsesWith, RemoveInstruction, SortTopologically).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/ir.h"

namespace kiln {

// For every instruction of a computation, the instructions that use it (each
// user once, in instruction order). A snapshot: edits do not update it.
using UserMap = std::unordered_map<const Instruction*, std::vector<Instruction*>>;
UserMap ComputeUsers(const Computation& computation);

// Gives names not yet used in one computation: "base", else "base.1", ...
class NameUniquer {
 public:
  explicit NameUniquer(const Computation& computation);
  std::string Make(const std::string& base);

 private:
  std::unordered_set<std::string> used_;
};

// A new instruction, not yet in any computation.
std::unique_ptr<Instruction> MakeInstruction(Opcode opcode, Shape shape, std::vector<Instruction*> operands,
                                             Attributes attrs = {});

// Copies `source` (opcode, shape, attributes, literal, called computations)
// into `target` with the given operands and name; returns the copy.
Instruction* CloneInstructionInto(const Instruction& source, Computation& target,
                                  std::vector<Instruction*> operands, std::string name);

// Adds `instruction` to `computation` under a unique name derived from
// `base`; returns it.
Instruction* AddNamedInstruction(Computation& computation, NameUniquer& names,
                                 std::unique_ptr<Instruction> instruction, const std::string& base);

}  // namespace kiln
