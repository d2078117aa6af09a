// What a derivative rule writes with: adds instructions to the computation
// being differentiated, each through shape inference (so a rule cannot build
// an ill-typed program silently), and the few composite pieces rules share
// (constants of a value's type, sums over dimensions, zeros).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/ir.h"
#include "core/ir_edit.h"

namespace kiln::autodiff {

// The cotangent of one value. An array value's is `array`, null when it is
// zero (nothing reached it yet); a tuple value's is one Cotangent per
// element, or no elements at all when every element is zero. Zeros stay
// symbolic so that parts of a program no gradient reaches cost nothing.
struct Cotangent {
  Instruction* array = nullptr;
  std::vector<Cotangent> elements;

  bool IsZero() const;
};

// Whether values of `type` have cotangents: real floats and complex numbers
// (integers and predicates have none).
inline bool CarriesGradient(ElementType type) { return IsFloating(type) || IsComplex(type); }

class VjpEmitter {
 public:
  VjpEmitter(Module& module, Computation& computation)
      : module_(module),
        computation_(computation),
        names_(computation),
        adders_(std::make_shared<std::unordered_map<int, Computation*>>()) {}
  // An emitter for another computation of the same module (a backward loop
  // body or branch) that shares `parent`'s scalar adders.
  VjpEmitter(VjpEmitter& parent, Computation& computation)
      : module_(parent.module_), computation_(computation), names_(computation), adders_(parent.adders_) {}

  Module& module() { return module_; }
  Computation& computation() { return computation_; }

  // The first failure of shape inference among the instructions added so
  // far (a rule built something ill-typed: INTERNAL, naming the op), or OK.
  const Status& status() const { return status_; }

  // Adds `opcode` over `operands` with the shape inference gives (or
  // `declared`, for ops whose shape the operands do not fix).
  // `name` is the base of its name (the opcode's name when empty).
  Instruction* Add(Opcode opcode, std::vector<Instruction*> operands, Attributes attrs = {},
                   const Shape* declared = nullptr, std::vector<Computation*> called = {},
                   const std::string& name = "");

  // Elementwise ops on operands of one shape.
  Instruction* Unary(Opcode opcode, Instruction* x) { return Add(opcode, {x}); }
  Instruction* Binary(Opcode opcode, Instruction* x, Instruction* y) { return Add(opcode, {x, y}); }
  Instruction* Compare(Instruction* x, Instruction* y, ComparisonDirection direction);
  Instruction* Select(Instruction* pred, Instruction* on_true, Instruction* on_false);

  Instruction* Constant(Literal value);
  // A constant `value` of `like`'s element type and dimensions (a scalar
  // constant broadcast when `like` is not a scalar).
  Instruction* Full(double value, const Shape& like);
  Instruction* Zeros(const Shape& like) { return Full(0.0, like); }
  // A zero of every array leaf of `shape`, as a tuple where it is one.
  Instruction* ZerosOf(const Shape& shape);

  Instruction* Convert(Instruction* x, ElementType to);
  Instruction* BroadcastInDim(Instruction* x, const Shape& like, std::vector<int64_t> dimensions);
  Instruction* Reshape(Instruction* x, std::vector<int64_t> dimensions);
  Instruction* Transpose(Instruction* x, std::vector<int64_t> permutation);
  // The sum of `x` over `dimensions` (sorted); `x` itself when there are none.
  Instruction* ReduceSum(Instruction* x, std::vector<int64_t> dimensions);
  // Sums `x` down to `target`'s dimensions where `target` is a scalar that
  // an elementwise op used against `x`'s shape; `x` when the shapes agree.
  Instruction* SumToShape(Instruction* x, const Shape& target);
  Instruction* GetTupleElement(Instruction* tuple, int64_t index);
  Instruction* Tuple(std::vector<Instruction*> elements);
  // A new parameter of the computation, numbered after the existing ones.
  Instruction* AddParameter(const Shape& shape, const std::string& name);
  // A copy of `source` (of another computation) over `operands`, named as
  // `source` where the name is free.
  Instruction* Clone(const Instruction& source, std::vector<Instruction*> operands);

  // Makes every use of the forward value `old` read `replacement` (a rule
  // that rewrites a forward instruction, as the while rule does to count
  // iterations); EmitBackward removes `old` once it is done.
  void Replace(Instruction* old, Instruction* replacement);
  // What reads of `value` read now: `value`, or what replaced it.
  Instruction* Current(Instruction* value) const;
  const std::unordered_map<const Instruction*, Instruction*>& replaced() const { return replaced_; }
  // The scalar (x, y) -> x + y computation of an element type (for
  // reductions and scatters), made once per module.
  Computation* Adder(ElementType type);

 private:
  Module& module_;
  Computation& computation_;
  NameUniquer names_;
  Status status_;
  std::shared_ptr<std::unordered_map<int, Computation*>> adders_;
  std::unordered_map<const Instruction*, Instruction*> replaced_;
};

}  // namespace kiln::autodiff
