// Forward-mode automatic differentiation (Jacobian-vector products) as an
// IR transformation: the derivative is a new module that computes the
// original results and, alongside, their tangents, compiled, fused and run
// on every backend like any program.
//
// Forward mode needs no tape: each value's tangent is computed right after
// the value, so a while loop carries its state's tangents in its own state
// and a conditional's branches return theirs beside their results.
//
// Covered: the ops that have a rule in core/autodiff/jvp_rules.cc:
// elementwise float math, convert, the shape ops (broadcast, reshape,
// transpose, slice, dynamic-slice, dynamic-update-slice, gather, scatter
// with the combiners reverse mode differentiates and the same rules
// (core/autodiff/jvp_scatter_rules.cc), concatenate, pad, reverse), select, clamp, reduce
// and reduce-window with add/maximum/minimum (ties share, as JAX's rule) and
// any other reducer, over one operand or several (a product included: the
// tangents fold along as dual numbers), dot_general, convolution,
// select-and-scatter,
// sort, top-k, all-reduce (add), map (its body lifted to arrays), tuples,
// calls (inlined first),
// conditionals and while loops (nested either way).
// Integer and predicate values have no tangent (JAX's float0): an op whose
// result holds no float (compare, convert or bit cast to integers) ends the
// tangent without a rule, and an integer result's tangent is zeros.
// Complex intermediates (complex, real, imag, fft, complex math) carry
// tangents like floats; the batch-norm ops are differentiated through their
// expansion (core/autodiff/jvp_batch_norm_rules.cc).
// Registered ops with a gradient function get the tangent by transposing it
// (core/autodiff/jvp_registered_op_rules.cc).
// Complex (c64/c128) parameters get complex tangents: the rules are linear
// over the reals, so J v is the derivative along v for any real and
// imaginary parts (holomorphic ops give f'(z) v). Reverse mode is its
// transpose under <a, b> = Re(sum a b): JAX's convention, the cotangent of
// z = x + iy under a real loss L is dL/dx - i dL/dy.
// Other custom calls than the partitioner's identity annotations have no
// derivative.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "core/autodiff/vjp_emitter.h"
#include "core/ir.h"
#include "core/status.h"

namespace kiln::autodiff {

// The tangent of one value, held as reverse mode holds a cotangent: an
// array value's is `array` (null when it is zero), a tuple value's is one
// Tangent per element (none at all when every element is zero). Zeros stay
// symbolic, so values no differentiated parameter reaches cost nothing.
using Tangent = Cotangent;

// The module `kiln_computation_jvp` returns. Its ENTRY takes the original
// parameters, then one tangent per parameter in `wrt` (ENTRY parameter
// numbers, in the order given), each of its parameter's shape. It returns a
// tuple of the original result leaves (tuples flattened in order) followed
// by the tangent of each result leaf, of that leaf's shape: the derivative
// of the results in the direction the tangents give. A leaf that is not a
// float (an integer or predicate result) gets zeros.
//
// Errors: INVALID_ARGUMENT for a `wrt` number that is not a parameter, one
// given twice, a parameter whose elements are not f16, bf16, f32, f64, c64
// or c128, or an op on the way from a differentiated parameter to the
// result that has no derivative (naming op and instruction);
// UNIMPLEMENTED for such an op whose rule is not written yet, and for
// tuple-shaped parameters. `module` itself is not changed.
StatusOr<std::unique_ptr<Module>> BuildJvp(const Module& module, std::span<const int64_t> wrt);

// The building block: for the instructions of the emitter's computation,
// operands first, adds the tangent of each one a seeded instruction
// reaches, starting from `seeds` (instruction, its tangent); returns the
// tangent of the computation's root. Instructions no seed reaches need no
// rule. A rule may replace its forward instruction (a while now carrying
// tangents); the root is then the replacement.
StatusOr<Tangent> EmitTangents(VjpEmitter& emitter, std::span<const std::pair<Instruction*, Tangent>> seeds);

}  // namespace kiln::autodiff
