// Simplifies chains of data-movement ops around broadcasts of scalars, and
// turns transposes that only move size-1 dimensions into reshapes (a reshape
// of a dense row-major array is free; a transpose is a copy):
//   reshape/transpose/slice/reverse(broadcast(scalar)) -> broadcast(scalar)
//   elementwise(broadcast(a), broadcast(b)...)         -> broadcast(elementwise(a, b...))  (scalars a, b)
//   transpose(x) moving only size-1 dimensions           -> reshape(x)
// Chains of the same op (reshape of reshape, transpose of transpose,
// broadcast of broadcast) are merged by the algebraic simplifier.
#pragma once

#include "core/pass.h"

namespace kiln {

class ShapeOpSimplifier : public Pass {
 public:
  std::string_view name() const override { return "shape-op-simplifier"; }
  StatusOr<bool> Run(Module& module) override;
};

}  // namespace kiln
