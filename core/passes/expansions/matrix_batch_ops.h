// Building blocks for the LAPACK expansions of QR, Hessenberg, SVD and
// Hermitian eigen (qr.cc, svd.cc, eigh.cc, jacobi.cc): batches of matrices as HLO values, with the batch
// dimensions leading and each matrix's rows and columns last, built with
// core/builder.h (scalars, fills, iotas and refusals are lapack_expansion_
// util.h's). Every helper works on f32, f64, c64 and c128; "real" means the
// element type's real component type.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/builder.h"
#include "core/builtin_custom_calls.h"
#include "core/ir.h"
#include "core/passes/expansions/lapack_expansion_util.h"
#include "core/status.h"

namespace kiln::matrix_batch {

// The LAPACK target an instruction calls, or nullptr (not a built-in target).
const BuiltinCustomCall* LapackTargetOf(const Instruction& instruction);

// The element type, batch dimensions and matrix extents of a rank >= 2 array.
struct MatrixBatchShape {
  ElementType type = ElementType::kF32;
  std::vector<int64_t> batch;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t batch_rank() const { return static_cast<int64_t>(batch.size()); }
  // batch..., then `trailing`.
  std::vector<int64_t> Dims(std::vector<int64_t> trailing) const;
  // 0, 1, ..., batch_rank() - 1.
  std::vector<int64_t> BatchAxes() const;
  ElementType real_type() const;
};

// The shape of operand `index` of a LAPACK custom call as a batch of
// matrices, or an error naming the call.
StatusOr<MatrixBatchShape> MatrixOperand(const Instruction& instruction, size_t index);

// The complex conjugate (the operand itself for real types).
Op Conjugate(Builder& builder, Op x);
// |x|^2 elementwise, of the real type.
Op AbsSquared(Builder& builder, Op x);
// A real array as `type` (complex: zero imaginary part).
Op RealAs(Builder& builder, Op real, ElementType type);
// The real part (the operand itself for real types) and the imaginary part
// (zeros of the real type for real types).
Op RealPart(Builder& builder, Op x);
Op ImagPart(Builder& builder, Op x, std::span<const int64_t> dims);
// The sum over `axis` (dropping it); the maximum of non-negative real
// values over `axes` (0 when empty).
Op SumOver(Builder& builder, Op x, int64_t axis);
Op MaxOver(Builder& builder, Op x, std::span<const int64_t> axes);
// Column `index` (an s32 scalar op) of a batch of matrices: batch..., rows.
Op Column(Builder& builder, Op matrices, const MatrixBatchShape& shape, Op index);
// The matrices with column `index` replaced by `column` (batch..., rows).
Op WithColumn(Builder& builder, Op matrices, const MatrixBatchShape& shape, Op column, Op index);
// Element `index` of the last axis of `vectors` (batch..., length): batch...
Op Entry(Builder& builder, Op vectors, const MatrixBatchShape& shape, int64_t length, Op index);
// `vectors` with element `index` of the last axis set to `values` (batch...).
Op WithEntry(Builder& builder, Op vectors, const MatrixBatchShape& shape, Op values, Op index);
// Identity matrices (batch..., rows, cols) of `shape`'s type.
Op Identities(Builder& builder, const MatrixBatchShape& shape);
// a (batch..., rows) times b (batch..., cols) into (batch..., rows, cols).
Op Outer(Builder& builder, Op a, Op b, const MatrixBatchShape& shape);
// The conjugate transpose of each matrix of `matrices` (`shape`'s extents).
Op Adjoint(Builder& builder, Op matrices, const MatrixBatchShape& shape);

// The elementary reflector of LAPACK's ?larfg for the part of `column`
// (batch..., rows) from row `pivot` on (`pivot` an s32 scalar op): H = I -
// tau v v^H with v(pivot) = 1 and v zero above it, and H^H column = beta
// e(pivot) with beta real, -sign(Re alpha) * norm; tau = 0 (H = I) when the
// entries below the pivot are zero and alpha is real.
struct Reflector {
  Op v;       // batch..., rows: 0 above the pivot, 1 at it, the scaled tail below
  Op tau;     // batch...
  Op stored;  // batch..., rows: column as ?geqrf leaves it (rows above the pivot kept, beta, v's tail)
};
Reflector MakeReflector(Builder& builder, Op column, const MatrixBatchShape& shape, Op pivot);

// matrices - scale * v (v^H matrices), with `scale` of batch..., restricted to
// the columns whose index is > `after` (an s32 scalar op; -1 for all).
Op ApplyFromLeft(Builder& builder, Op matrices, const MatrixBatchShape& shape, Op v, Op scale, Op after);

// A counting loop: state (s32 counter, values...), run while `keep_going`
// holds of the state, the body building the next values from the counter and
// the current values. Returns the final values (without the counter).
struct CountingLoop {
  // The state's values' shapes (not the counter's).
  std::vector<Shape> value_shapes;
  int64_t first = 0;
  int64_t step = 1;
  // counter, values -> PRED scalar.
  std::function<Op(Builder&, Op, std::span<const Op>)> keep_going;
  // counter, values -> next values.
  std::function<std::vector<Op>(Builder&, Op, std::span<const Op>)> body;
};
StatusOr<std::vector<Op>> RunLoop(Builder& builder, const CountingLoop& loop, std::span<const Op> initial);

}  // namespace kiln::matrix_batch
