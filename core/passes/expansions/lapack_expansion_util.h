// What every LAPACK expansion shares: reading a built-in LAPACK custom
// call's matrices and option letters, naming what cannot be expanded
// (CannotExpand), scalars, fills and iotas, and the small builder pieces the
// Cholesky, triangular solve and LU loops are made of. The matrix helpers
// here work on matrices flattened to [batch, rows, cols] (rank 3): an
// expansion reshapes its operands so once and reshapes back at the end.
// matrix_batch_ops.h builds the QR, SVD and eigh pieces (several batch
// dimensions kept) on top of these.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/builder.h"
#include "core/builtin_custom_calls.h"
#include "core/ir.h"
#include "core/status.h"

namespace kiln::expansions {

// True when `instruction` is a custom call of a built-in LAPACK target that
// runs `routine`.
bool IsLapackCall(const Instruction& instruction, LapackRoutine routine);

// The refusal of an expansion: UNIMPLEMENTED naming the instruction, its
// target and why.
template <typename... Args>
Status CannotExpand(const Instruction& instruction, const Args&... args) {
  return Unimplemented("custom-call '", instruction.name, "' (target '", instruction.attrs.custom_call_target,
                       "') cannot be expanded for a device: ", args...);
}

// A batch of matrices: the leading dimensions index the matrices.
struct MatrixBatchShape {
  ElementType type = ElementType::kInvalid;
  std::vector<int64_t> batch_dims;
  int64_t batch = 1;  // the product of batch_dims
  int64_t rows = 0;
  int64_t cols = 0;
};

// Operand `index` of `instruction` as a batch of matrices of the target's
// element type, or the refusal naming what is wrong.
StatusOr<MatrixBatchShape> MatrixOperand(const Instruction& instruction, size_t index);

// The typed-FFI attribute `name` of `instruction`, one of the LAPACK option
// letters in `allowed` (JAX passes them as their character codes).
StatusOr<char> LetterAttribute(const Instruction& instruction, const std::string& name,
                               std::string_view allowed);

// A scalar constant `value` of `type` (real part for complex types).
Op ScalarOf(Builder& builder, ElementType type, double value);
// `value` of `type` broadcast to `dims`.
Op Filled(Builder& builder, ElementType type, double value, std::span<const int64_t> dims);
// An s32 array of `dims` holding each element's index along `dimension`.
Op IndexGrid(Builder& builder, std::span<const int64_t> dims, int64_t dimension);
// The complex conjugate of `x` (x itself for real types).
Op Conjugate(Builder& builder, Op x, ElementType type);
// The conjugate transpose of each matrix of a [batch, rows, cols] array.
Op Adjoint(Builder& builder, Op x, ElementType type);
// A PRED [batch, rows, cols] mask: true on and below the diagonal (lower) or
// on and above it (upper).
Op TriangleMask(Builder& builder, std::span<const int64_t> dims, bool lower);
// The scalar computation (x, y) -> x + y (or max, min) of `type`, for Reduce.
StatusOr<std::unique_ptr<Module>> ScalarComputation(Opcode opcode, ElementType type);

// The panel width of the blocked factorisations (potrf, getrf) of order
// `order`: the whole matrix up to 32 (one trip), else 32 columns, and 64
// from 2048 on. A trip factors its panel column by column (an inner
// PanelColumnLoop), then updates the rest with dots, so a device runs
// order / width outer trips.
int64_t PanelWidth(int64_t order);
// `order` rounded up to a multiple of `width`.
int64_t RoundedUp(int64_t order, int64_t width);
// A [batch, rows, cols] array padded with zeros to [batch, rows_to,
// cols_to]; with `unit_diagonal`, the padded diagonal entries are 1 (a
// positive definite matrix stays positive definite).
Op PaddedMatrices(Builder& builder, Op x, ElementType type, std::span<const int64_t> dims, int64_t rows_to,
                  int64_t cols_to, bool unit_diagonal);
// The inverse of each unit lower triangular [batch, width, width] matrix
// (the diagonal and upper triangle of `lower` are not read): row
// substitution, one row per step of a PanelColumnLoop, each a small batched
// dot; or the error building the loop.
StatusOr<Op> UnitLowerInverse(Builder& builder, Op lower, ElementType type, int64_t batch, int64_t width);
// Row `row` of each [batch, rows, cols] matrix, where `row` (s32, [batch])
// differs per matrix: [batch, cols]. A masked sum over the rows; `add` is
// ScalarComputation(kAdd, type).
Op RowAt(Builder& builder, Op matrices, ElementType type, std::span<const int64_t> dims, Op row,
         const Module& add);

// The body of a counted loop: given the trip index (s32 scalar) and the
// state, the next state (same shapes, same order).
using LoopBody = std::function<std::vector<Op>(Builder& body, Op trip, const std::vector<Op>& state)>;

// Runs `body` for trips 0 .. trips-1 as one while loop over `init` and
// returns the final state, or the error building the loop.
StatusOr<std::vector<Op>> CountedLoop(Builder& builder, int64_t trips, const std::vector<Op>& init,
                                      const LoopBody& body);

// The panel's column steps as an inner loop: `step` builds one column
// step, given the column's index inside the panel (s32 scalar, run time) and
// the state; the loop runs columns 0 .. columns-1 of it, kColumnsPerInnerTrip
// of them unrolled per inner trip (columns must be a multiple, or smaller:
// then all of them). One column step's instructions are built that many
// times, not once per column: the module's size, and its compile time, no
// longer grow with the panel width; the unrolled few keep the inner trips
// (on a device, host round trips) to columns / kColumnsPerInnerTrip.
// `state` may carry values the steps only read (the panel's first column).
inline constexpr int64_t kColumnsPerInnerTrip = 4;
StatusOr<std::vector<Op>> PanelColumnLoop(Builder& builder, int64_t columns, const std::vector<Op>& init,
                                          const LoopBody& step);

}  // namespace kiln::expansions
