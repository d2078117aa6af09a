// Helpers for ops that call a computation per element (reduce, map, sort,
// scatter...): recognising trivial computations so kernels can use a typed
// fast path, and calling a computation on scalars without reallocating.
#pragma once

#include <optional>
#include <vector>

#include "core/interpreter/eval_context.h"
#include "core/interpreter/scalar_ops.h"

namespace kiln::interpreter {

// If `computation` is `p0 OP p1` on two scalar parameters for an elementwise
// binary OP (either operand order for commutative ops), returns OP.
std::optional<Opcode> SimpleBinaryComputation(const Computation& computation);

// If `computation` is `compare(p0, p1)` with direction LT or GT (a plain
// ascending or descending comparator over the first operand pair), returns
// that instruction.
const Instruction* SimpleComparator(const Computation& computation);

// Calls a computation on scalar arguments set one by one from array elements.
class ScalarCall {
 public:
  ScalarCall(ComputationRunner& runner, const Computation& computation,
             const std::vector<ElementType>& types);
  // Sets argument `argument` to element `linear` of `source`.
  void Set(size_t argument, const Literal& source, int64_t linear);
  // Runs the computation; the result is a scalar or a tuple of scalars.
  StatusOr<Literal> Call();
  // Leaf `i` of a result (the result itself when it is not a tuple).
  static const Literal& Leaf(const Literal& result, size_t i);

 private:
  ComputationRunner& runner_;
  const Computation& computation_;
  std::vector<Literal> arguments_;
  std::vector<const Literal*> pointers_;
};

// Copies element `from` of `source` into element `to` of `destination` (same type).
void CopyElement(const Literal& source, int64_t from, Literal& destination, int64_t to);

}  // namespace kiln::interpreter
