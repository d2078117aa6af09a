// What the scatter rules of both modes share (scatter_rules.cc for
// reverse mode, jvp_scatter_rules.cc for forward mode): which combiner a
// scatter has, reading values back at its windows, which windows it
// dropped, and the per-update coefficients of the multiply and extremal
// combiners, so that both modes differentiate the same function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/autodiff/vjp_emitter.h"
#include "core/ir.h"
#include "core/status.h"

namespace kiln::autodiff {

// The parts of a scatter over n operands (n = 1 for one): its operands
// 0..n-1, then the indices, then update k at n + 1 + k.
size_t ScatteredCount(const Instruction& x);
Instruction* ScatterIndices(const Instruction& x);
Instruction* ScatterUpdates(const Instruction& x, size_t k = 0);

// Whether result k of the combiner of a scatter over several operands
// reads parameters other than k and n + k (a complex-like product of
// pairs); false for one operand.
bool MixesComponents(const Instruction& x);

// The combiner of a scatter of one operand (kOther for several). The first five are
// differentiated whatever the indices (subtract as old - update, which is
// linear, so its order does not matter); any other is differentiated only
// when no two updates land on one element (UpdatesAreDisjoint).
enum class ScatterCombiner { kAdd, kSubtract, kOverwrite, kMultiply, kExtremal, kOther };
ScatterCombiner CombinerOf(const Instruction& scatter);

// The window each update covers in every operand, per operand dimension.
std::vector<int64_t> ScatterWindows(const Instruction& x);

// `source` (of the operand's dimensions) read back at each update's window:
// a gather with the scatter's dimension numbers (it clamps the windows the
// scatter dropped, so callers mask those with WindowsThatFit).
Instruction* ReadBack(VjpEmitter& e, const Instruction& x, Instruction* source);

// Per update element: whether its window fits (0 <= start <= size - window
// in every indexed dimension), so that the scatter did not drop it.
StatusOr<Instruction*> WindowsThatFit(VjpEmitter& e, const Instruction& x);

// `values` (of the updates' shape) added up at the scatter's windows into
// zeros of the operand's dimensions (windows that do not fit are dropped).
Instruction* ScatterAdd(VjpEmitter& e, const Instruction& x, Instruction* values);

// A scatter of `updates` into `operand` with `x`'s indices and combiner.
Instruction* ScatterLike(VjpEmitter& e, const Instruction& x, Instruction* operand, Instruction* updates);

// Multiply: per update element, the product of the other updates that land
// on its operand element (P / update when the update is not zero, else the
// product of the nonzero ones when it is the only zero there, 0 when there
// are more), so repeated indices and zero updates are exact.
Instruction* ProductOfOtherUpdates(VjpEmitter& e, const Instruction& x);

// Maximum/minimum, as JAX's scatter_max/scatter_min: of the n updates equal
// to the result at an element, each gets 1/n of its derivative, or 1/(n+1)
// when the operand element equals the result too, which then keeps
// 1/(n+1). Per update element: `update_share` (0 for updates that did not
// win or were dropped) and `operand_coefficient`, what each of the updates
// at an element takes from the operand element's derivative (negative;
// to be masked where the window was dropped).
struct ExtremalShares {
  Instruction* update_share = nullptr;
  Instruction* operand_coefficient = nullptr;
};
ExtremalShares ExtremalSharesOf(VjpEmitter& e, Instruction& x, Instruction* fits);

// Whether no two updates of `x` land on one operand element: the scatter
// says unique_indices=true, or its indices are a constant whose windows
// that fit are pairwise disjoint.
bool UpdatesAreDisjoint(const Instruction& x);

// The INVALID_ARGUMENT for a scatter whose combiner (CombinerOf: kOther)
// depends on the order in which repeated indices are applied; `mode` is
// "grad" or "jvp".
Status RepeatedIndicesRefusal(const Instruction& x, const char* mode);

// A scatter over n operands whose updates land on distinct elements,
// written as ops the ordinary rules differentiate: each operand read back
// at the windows (`gathered`), the combiner applied to all of those and the
// updates elementwise (`combined`: one map per result, over all 2n arrays,
// since a map has one result), and each result overwriting its operand
// (`overwritten`, equal to the scatter's result k). Added to the emitter's
// computation.
struct DisjointScatter {
  std::vector<Instruction*> gathered;
  std::vector<Instruction*> combined;
  std::vector<Instruction*> overwritten;
};
DisjointScatter ExpandDisjointScatter(VjpEmitter& e, Instruction& x);

}  // namespace kiln::autodiff
