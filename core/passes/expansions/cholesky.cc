// potrf (lapack_?potrf_ffi) as a loop of ordinary HLO: a left-looking
// Cholesky factorisation, one column per trip, vectorised over the column's
// rows and the batch. Trip j computes column j of the lower factor L from
// the matrix's column j and the columns already found (one batched
// matrix-vector product), as LAPACK's unblocked ?potf2 does.
//
// LAPACK's conventions are kept: only the `uplo` triangle is read and
// written, the other triangle is the input's; at the first pivot that is
// not positive (or NaN), at column j, info = j + 1 and the factor of the
// leading minor of order j is in place, as LAPACK promises. Past that point
// LAPACK's contents depend on its blocking (JAX replaces the whole result
// with NaN when info > 0); here, as unblocked ?potf2 leaves them, the
// diagonal entry holds the failed pivot and the later entries are the
// input's. uplo 'U' (A = U^H U) is the lower factorisation of A^H (whose
// lower triangle is the conjugated upper triangle of A), conjugate-
// transposed back.
#include "core/passes/expansions/expansions.h"
#include "core/passes/expansions/lapack_expansion_util.h"

namespace kiln {

bool MatchesCholesky(const Instruction& instruction) {
  return expansions::IsLapackCall(instruction, LapackRoutine::kPotrf);
}

StatusOr<std::unique_ptr<Module>> ExpandCholesky(const Instruction& instruction) {
  using namespace expansions;  // NOLINT: this folder's helpers, in this function only (unity builds)
  if (instruction.operands.size() != 1) {
    return CannotExpand(instruction, "it takes 1 operand, got ", instruction.operands.size());
  }
  KILN_ASSIGN_OR_RETURN(MatrixBatchShape matrices, MatrixOperand(instruction, 0));
  if (matrices.rows != matrices.cols) return CannotExpand(instruction, "the matrices are not square");
  KILN_ASSIGN_OR_RETURN(char uplo, LetterAttribute(instruction, "uplo", "LU"));
  const Shape& operand_shape = instruction.operand(0)->shape;
  const Shape info_shape(ElementType::kS32, matrices.batch_dims);
  if (!instruction.shape.Compatible(Shape::Tuple({operand_shape, info_shape}))) {
    return CannotExpand(instruction, "its result ", instruction.shape.ToString(), " is not (",
                        operand_shape.ToString(), ", ", info_shape.ToString(), ")");
  }
  const ElementType type = matrices.type;
  const ElementType real = ComplexComponentType(type);
  const int64_t batch = matrices.batch;
  const int64_t n = matrices.rows;
  const std::vector<int64_t> square = {batch, n, n};
  const std::vector<int64_t> column = {batch, n};

  Builder builder("potrf_expansion");
  Op input = builder.Parameter(0, operand_shape, "a");
  Op a = builder.Reshape(input, square);
  // The matrix whose lower triangle is factored.
  Op lower_input = uplo == 'L' ? a : Adjoint(builder, a, type);
  const std::vector<Op> init = {lower_input, Filled(builder, type, 0, square),
                                Filled(builder, ElementType::kS32, 0, std::vector<int64_t>{batch})};
  auto trip = [&](Builder& b, Op j, const std::vector<Op>& state) -> std::vector<Op> {
    Op matrix = state[0], factor = state[1], info = state[2];
    Op zero = b.ConstantR0<int32_t>(0);
    const int64_t column_slice[] = {batch, n, 1};
    const int64_t row_slice[] = {batch, 1, n};
    const Op column_at[] = {zero, zero, j};
    const Op row_at[] = {zero, j, zero};
    Op a_column = b.Reshape(b.DynamicSlice(matrix, column_at, column_slice), column);
    // Row j of the factor so far: its columns j.. are still zero.
    Op l_row = Conjugate(b, b.Reshape(b.DynamicSlice(factor, row_at, row_slice), column), type);
    DotDimensionNumbers dims;
    dims.lhs_contracting_dimensions = {2};
    dims.rhs_contracting_dimensions = {1};
    dims.lhs_batch_dimensions = {0};
    dims.rhs_batch_dimensions = {0};
    Op updated = b.Sub(a_column, b.DotGeneral(factor, l_row, dims));
    const Op diagonal_at[] = {zero, j};
    const int64_t one_element[] = {batch, 1};
    const int64_t per_matrix[] = {batch};
    Op pivot = b.Real(b.Reshape(b.DynamicSlice(updated, diagonal_at, one_element), per_matrix));
    Op positive = b.Gt(pivot, ScalarOf(b, real, 0));  // false for NaN, as ?potf2's check
    Op root = b.Sqrt(pivot);
    Op zero_real = Filled(b, real, 0, per_matrix);
    Op root_typed = IsComplex(type) ? b.Complex(root, zero_real) : root;
    Op pivot_typed = IsComplex(type) ? b.Complex(pivot, zero_real) : pivot;
    const int64_t along_batch[] = {0};
    Op rows = IndexGrid(b, column, 1);
    Op j_rows = b.BroadcastInDim(j, column, {});
    Op below = b.Gt(rows, j_rows);
    Op on_diagonal = b.Eq(rows, j_rows);
    Op zeros = Filled(b, type, 0, column);
    Op scaled = b.Div(updated, b.BroadcastInDim(root_typed, column, along_batch));
    Op factored = b.Select(below, scaled,
                           b.Select(on_diagonal, b.BroadcastInDim(root_typed, column, along_batch), zeros));
    Op failed = b.Select(below, a_column,
                         b.Select(on_diagonal, b.BroadcastInDim(pivot_typed, column, along_batch), zeros));
    Op good_so_far = b.Eq(info, b.ConstantR0<int32_t>(0));
    Op new_column =
        b.Select(b.BroadcastInDim(good_so_far, column, along_batch),
                 b.Select(b.BroadcastInDim(positive, column, along_batch), factored, failed), a_column);
    const int64_t column_shape[] = {batch, n, 1};
    Op next_factor = b.DynamicUpdateSlice(factor, b.Reshape(new_column, column_shape), column_at);
    Op fails_here = b.And(good_so_far, b.Not(positive));
    Op next_info =
        b.Select(fails_here, b.BroadcastInDim(b.Add(j, b.ConstantR0<int32_t>(1)), per_matrix, {}), info);
    return {matrix, next_factor, next_info};
  };
  KILN_ASSIGN_OR_RETURN(std::vector<Op> final_state, CountedLoop(builder, n, init, trip));
  Op lower = builder.Select(TriangleMask(builder, square, /*lower=*/true), final_state[1], final_state[0]);
  Op factor = uplo == 'L' ? lower : Adjoint(builder, lower, type);
  const Op results[] = {builder.Reshape(factor, operand_shape.dimensions()),
                        builder.Reshape(final_state[2], matrices.batch_dims)};
  return builder.Build(builder.Tuple(results));
}

}  // namespace kiln
