// The IR: a Module owns Computations; a Computation owns Instructions forming
// a DAG with one root. Nested computations (to_apply, condition, body,
// branches, comparator, select/scatter) are other computations of the same
// module, referenced by pointer and printed by name.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/attributes.h"
#include "core/boxed.h"
#include "core/literal.h"
#include "core/opcode.h"
#include "core/shape.h"
#include "core/status.h"

namespace kiln {

class Computation;
class Module;

// One operation. Operands and called computations are non-owning pointers
// into the same module. `called` holds, by opcode:
//   map, reduce, reduce-window, scatter, all-reduce, call, sort: {to_apply}
//   select-and-scatter: {select, scatter}
//   while: {condition, body}
//   conditional: branch computations in order (pred form: {true, false})
//   custom-call: any called computations (unused by Kiln today)
struct Instruction {
  Opcode opcode = Opcode::kConstant;
  std::string name;
  Shape shape;
  std::vector<Instruction*> operands;
  std::vector<Computation*> called;
  Attributes attrs;
  BoxedOptional<Literal> literal;  // constant only (on the heap: see core/boxed.h)

  Instruction* operand(size_t i) const { return operands[i]; }
  std::string ToString() const;  // one line of HLO text
};

// Whether the instruction is observable beyond its result, so that it runs
// even when nothing uses it (as XLA keeps it): the opcode's kSideEffect trait,
// or a custom call marked custom_call_has_side_effect.
bool HasSideEffect(const Instruction& instruction);

class Computation {
 public:
  explicit Computation(std::string name) : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  // Renames; the module holding this computation finds it by the new name.
  void set_name(std::string name);

  // Appends an instruction; operands must already be in this computation, so
  // `instructions()` is always in a valid (topological) order.
  Instruction* AddInstruction(std::unique_ptr<Instruction> instruction);
  const std::vector<std::unique_ptr<Instruction>>& instructions() const { return instructions_; }

  Instruction* root() const { return root_; }
  void set_root(Instruction* root) { root_ = root; }

  // Parameters ordered by parameter number (filled by AddInstruction).
  const std::vector<Instruction*>& parameters() const { return parameters_; }
  Instruction* parameter(size_t i) const { return parameters_[i]; }

  ProgramShape program_shape() const;

  // Instructions reachable from the root, operands before users.
  std::vector<Instruction*> PostOrder() const;

  // What running the computation evaluates, in instruction order: what the
  // root needs, plus side-effecting instructions and what they need.
  std::vector<const Instruction*> LiveInstructions() const;

  // Drops instructions not reachable from the root (parameters are kept).
  // Returns true when something was removed.
  bool RemoveDeadInstructions();

  // Editing (see also core/ir_edit.h). Passes may append an instruction whose
  // users come earlier; SortTopologically restores the operands-first order
  // the verifier requires, keeping the existing order where it is valid.
  void SortTopologically();
  // Instructions that use `instruction` as an operand (each listed once).
  std::vector<Instruction*> Users(const Instruction* instruction) const;
  // Makes every user of `old` (and the root, if it is `old`) use `replacement`.
  void ReplaceAllUsesWith(const Instruction* old, Instruction* replacement);
  // Removes an instruction nothing uses; refuses the root, parameters and
  // instructions that still have users.
  Status RemoveInstruction(const Instruction* instruction);
  // Takes every instruction out, leaving the computation empty (no root, no
  // parameters), so that a pass can move a body into another computation
  // instead of copying it (the inliner, for a callee called once).
  std::vector<std::unique_ptr<Instruction>> ReleaseInstructions();

 private:
  friend class Module;

  std::string name_;
  Module* module_ = nullptr;  // the module holding it, if any
  std::vector<std::unique_ptr<Instruction>> instructions_;
  std::vector<Instruction*> parameters_;
  Instruction* root_ = nullptr;
};

class Module {
 public:
  explicit Module(std::string name) : name_(std::move(name)) {}
  // Its computations point back at it, so it stays where it was made.
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // Adds a computation; its name is made unique within the module.
  Computation* AddComputation(std::unique_ptr<Computation> computation);
  const std::vector<std::unique_ptr<Computation>>& computations() const { return computations_; }
  // The computation of that name, or null; constant time. (When several share
  // a name, which the verifier refuses, any one of them.)
  Computation* FindComputation(const std::string& name) const;

  Computation* entry() const { return entry_; }
  void set_entry(Computation* entry) { entry_ = entry; }

  // Optional layouts of the entry's parameters and result
  // (entry_computation_layout); empty means default layouts.
  const std::optional<ProgramShape>& entry_layout() const { return entry_layout_; }
  void set_entry_layout(std::optional<ProgramShape> layout) { entry_layout_ = std::move(layout); }

  // Deep copy; called-computation pointers are remapped to the copy.
  std::unique_ptr<Module> Clone() const;

  // Copies `computation` and everything it calls (from another module) into
  // this one, returning the copy of `computation`. Names are uniquified.
  Computation* ImportComputation(const Computation& computation);

  // Removes computations neither the entry nor anything it calls reaches
  // (with no entry, nothing is removed). Returns true when any was removed.
  bool RemoveUnreachableComputations();

  // Computations in an order where callees come before callers; the entry last.
  std::vector<Computation*> ComputationsPostOrder() const;

  // HLO text (see hlo_printer.h).
  std::string ToString() const;

 private:
  friend class Computation;

  std::string UniqueComputationName(const std::string& base);
  void Renamed(Computation* computation, const std::string& old_name);

  std::string name_;
  std::vector<std::unique_ptr<Computation>> computations_;
  std::unordered_multimap<std::string, Computation*> by_name_;
  // Per base name, the suffix UniqueComputationName tries first: many copies
  // of one computation ("add", "add.1", ...) must not search from 1 each time.
  std::unordered_map<std::string, int> next_suffix_;
  Computation* entry_ = nullptr;
  std::optional<ProgramShape> entry_layout_;
};

}  // namespace kiln
