// Reverse-mode automatic differentiation (vector-Jacobian products) as an IR
// transformation: the gradient is a new module, compiled, fused and run on
// every backend like any program.
//
// Covered: straight-line computations (no while or conditional on the
// path from a differentiated parameter to the result; calls are inlined
// first) over the ops that have a rule in core/autodiff/vjp_rules.cc:
// elementwise float math, convert, the shape ops (broadcast, reshape,
// transpose, slice, dynamic-slice, dynamic-update-slice, gather, scatter-add,
// concatenate, pad, reverse), reduce with add/maximum/minimum,
// dot_general, tuples. Not yet: control flow (the per-computation
// EmitBackward below is the piece a while or conditional rule will call
// for its body and branches), convolution, other scatters, reduce-window,
// sort/top-k, batch-norm ops, custom calls, complex numbers, forward mode
// (JVP).
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
// parameter that is not an f16/bf16/f32/f64 array, or an op on the way from
// a differentiated parameter to the result that has no derivative (naming
// op and instruction); UNIMPLEMENTED for such an op whose rule is not
// written yet, and for complex or tuple-shaped parameters. `module` itself
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
