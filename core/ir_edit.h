// Utilities for passes that rewrite the IR: a users table, replacements
// applied in one sweep, unique names and instruction creation/cloning.
// Computation itself offers the primitive edits (ReplaceAllUsesWith,
// RemoveInstruction, SortTopologically).
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

// Replaces instructions of one computation by others in a single sweep.
// Computation::ReplaceAllUsesWith walks the whole computation, so a pass that
// rewrites instruction by instruction calls Replace instead, Forward on each
// instruction before it looks at it, and Apply once at the end: the
// instructions it looks at read the same operands as if every earlier
// replacement had been made at once, and the pass stays linear in the size
// of the computation.
class UseReplacer {
 public:
  explicit UseReplacer(Computation& computation) : computation_(computation) {}

  // Uses of `old` are to read `replacement` (which may itself be replaced later).
  void Replace(const Instruction* old, Instruction* replacement);
  // What a use of `value` by `user` reads after the replacements so far. As
  // with ReplaceAllUsesWith, an instruction never becomes its own operand: a
  // replacement that reads what it replaces keeps reading it.
  Instruction* Resolve(Instruction* value, const Instruction* user = nullptr) const;
  // Points `instruction`'s operands at what they read after the replacements so far.
  void Forward(Instruction& instruction) const;
  // Forwards every instruction of the computation and its root; returns
  // whether any replacement was made.
  bool Apply();

 private:
  Computation& computation_;
  std::unordered_map<const Instruction*, Instruction*> replacements_;
};

// Gives names not yet used in one computation: "base", else "base.1", ...
// The names in use are read on the first Make, not on construction: most
// passes make one per computation and add nothing to most computations.
class NameUniquer {
 public:
  explicit NameUniquer(const Computation& computation) : computation_(&computation) {}
  std::string Make(const std::string& base);

 private:
  // Adds `name` unless it is in use; returns whether it was added.
  bool Use(const std::string& name);
  // Makes room for `names` names at most half full.
  void Grow(size_t names);

  const Computation* computation_;  // null once its names are in used_
  // The names in use, in one flat array (open addressing, linear probing, at
  // most half full; "" marks a free slot, and no name is empty): the inliner
  // makes a name per inlined instruction, and a hash set's node per name was
  // a tenth of inlining 100k instructions.
  std::vector<std::string> used_;
  size_t used_count_ = 0;
  // Per stem, the suffix to try first, so that many names from one stem
  // ("broadcast.1", "broadcast.2", ...) do not each search from 1.
  std::unordered_map<std::string, int> next_suffix_;
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
