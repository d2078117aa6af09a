// What a rewrite rule may use: the computation being rewritten, fresh names,
// and functions that add the few instructions rewrites create (scalar
// constants, broadcasts, reshapes, transposes).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/ir.h"
#include "core/ir_edit.h"

namespace kiln {

class RewriteContext {
 public:
  RewriteContext(Module& module, Computation& computation)
      : module_(module), computation_(computation), names_(computation) {}

  Module& module() { return module_; }
  Computation& computation() { return computation_; }

  // Adds `instruction` under a fresh name derived from `base`.
  Instruction* Add(std::unique_ptr<Instruction> instruction, const std::string& base);
  Instruction* Constant(Literal value, const std::string& base = "constant");
  // broadcast(operand) to `shape`, operand dimension i -> result dimension dimensions[i].
  Instruction* Broadcast(Instruction* operand, const Shape& shape, std::vector<int64_t> dimensions);
  // A scalar constant broadcast to `shape` (the constant alone when `shape` is a scalar).
  Instruction* Splat(const Literal& scalar, const Shape& shape);
  Instruction* Reshape(Instruction* operand, const Shape& shape);
  Instruction* Transpose(Instruction* operand, const Shape& shape, std::vector<int64_t> permutation);

 private:
  Module& module_;
  Computation& computation_;
  NameUniquer names_;
};

// If `instruction` is a constant whose elements all hold one value, or a
// broadcast of such a constant, that value as a scalar literal.
std::optional<Literal> UniformValue(const Instruction& instruction);

// Tests on scalar literals (false for non-scalars and the wrong types).
bool IsIntegerValue(const Literal& scalar, int64_t value);  // integral (not pred) only
bool IsFloatOne(const Literal& scalar);                     // floating only
bool IsPositiveZero(const Literal& scalar);                 // floating only
bool IsNegativeZero(const Literal& scalar);                 // floating only
// The value a scalar pred literal holds.
std::optional<bool> PredValue(const Literal& scalar);

// True when `permutation` is 0, 1, ..., n-1.
bool IsIdentityPermutation(std::span<const int64_t> permutation);

}  // namespace kiln
