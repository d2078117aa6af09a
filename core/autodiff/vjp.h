// Reverse-mode automatic differentiation (vector-Jacobian products) as an IR
// transformation: the gradient is a new module, compiled, fused and run on
// every backend like any program.
//
// Covered: the ops that have a rule in core/autodiff/vjp_rules.cc:
// elementwise float and complex math, convert, complex/real/imag, fft
// (core/autodiff/complex_rules.cc; complex cotangents as JAX's), the shape ops (broadcast, reshape,
// transpose, slice, dynamic-slice, dynamic-update-slice, gather, scatter
// (core/autodiff/scatter_rules.cc: add, subtract, overwrite, multiply,
// maximum, minimum; any other combiner when no two updates land on one
// element, else INVALID_ARGUMENT naming it), concatenate, pad, reverse), reduce
// and reduce-window with any reducer whose body map's rule lifts (add,
// maximum, minimum and, over several operands, reducers that choose as
// argmax's by rules of their own, core/autodiff/variadic_reduction_rules.cc;
// others, a product included, as a tree of reducer applications,
// core/autodiff/reduction_tree_rules.cc), dot_general, convolution, sort,
// top-k, batch-norm training and inference, map (its body lifted to arrays,
// core/autodiff/map_rules.cc), tuples
// (calls are inlined first), and control flow
// (core/autodiff/control_flow_rules.cc): conditionals of both forms and
// while loops with trip counts known only at run time, nested in each
// other; the forward loop counts its iterations and pushes the state that
// changes on a tape (core/tape_custom_calls.h) that the backward loop pops.
// Calls of registered ops (core/op_registry.h) with a gradient function are
// differentiated by it (core/autodiff/registered_op_rules.cc).
// Scatters over several operands combined component by component
// (core/autodiff/variadic_scatter_rules.cc).
// Not yet: reducers whose body is not elementwise, other
// custom calls, differentiating a gradient through a while loop again.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/autodiff/vjp_emitter.h"
#include "core/ir.h"
#include "core/status.h"

namespace kiln::autodiff {

// The module `kiln grad` writes. Its ENTRY takes the original parameters,
// then one cotangent per array leaf of the original result (tuples
// flattened in order), each of that leaf's shape; when the original result
// is one floating-point scalar (not in a tuple) there is no cotangent
// parameter and the cotangent is 1, so the module returns the gradient of a
// loss. It returns a tuple of the original result leaves followed by the
// gradient of each parameter in `wrt` (ENTRY parameter numbers, in the order
// given; repeats allowed), each of its parameter's shape.
//
// Errors: INVALID_ARGUMENT for a `wrt` number that is not a parameter, a
// parameter that is not an f16/bf16/f32/f64/c64/c128 array, or an op on the way from
// a differentiated parameter to the result that has no derivative (naming
// op and instruction); UNIMPLEMENTED for such an op whose rule is not
// written yet, and for tuple-shaped parameters. `module` itself
// is not changed.
StatusOr<std::unique_ptr<Module>> BuildVjp(const Module& module, std::span<const int64_t> wrt);

// The building block: appends to `computation` (whose instructions are the
// forward values the rules read) the backward pass from its root, whose
// cotangent is `root_cotangent`, and returns the cotangent of each
// instruction of `wrt` (zero when the result does not depend on it).
// Only instructions between a `wrt` instruction and the root are
// differentiated, so ops elsewhere (integer indices, random numbers, ...)
// need no rule.
StatusOr<std::vector<Cotangent>> EmitBackward(VjpEmitter& emitter, const Cotangent& root_cotangent,
                                              std::span<Instruction* const> wrt);

}  // namespace kiln::autodiff
