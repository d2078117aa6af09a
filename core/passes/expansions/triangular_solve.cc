// trsm (lapack_?trsm_ffi, BLAS's triangular solve with many right-hand
// sides) as a loop of ordinary HLO: blocked substitution, nb rows of the
// solution per trip (PanelWidth), vectorised over the right-hand sides and
// the batch, so a device runs n / nb trips.
//
// Every case is first turned into one form, "T X = R with T lower
// triangular": the triangle `uplo` of A is kept (the other is never read,
// as BLAS), its diagonal replaced by ones for diag 'U'; op(A) is A, A^T or
// A^H as trans_x says; side 'R' (X op(A) = B) is op(A)^T X^T = B^T; an upper
// triangular T becomes lower by reversing its rows and columns (and R's
// rows). Trip k then computes the block of rows B = [k nb, (k + 1) nb):
// X_B = D^-1 (R_B - T[B, :] X) (one dot), where the rows of X not yet
// found are zero, and D = T[B, B] is solved by row substitution in an
// inner loop of the trip (backward stable, as BLAS's; an explicit inverse
// of D lost accuracy on ill-conditioned unit triangles).
#include "core/passes/expansions/expansions.h"
#include "core/passes/expansions/lapack_expansion_util.h"

namespace kiln {

bool MatchesTriangularSolve(const Instruction& instruction) {
  return expansions::IsLapackCall(instruction, LapackRoutine::kTrsm);
}

StatusOr<std::unique_ptr<Module>> ExpandTriangularSolve(const Instruction& instruction) {
  using namespace expansions;  // NOLINT: this folder's helpers, in this function only (unity builds)
  if (instruction.operands.size() != 2) {
    return CannotExpand(instruction, "it takes 2 operands (A, B), got ", instruction.operands.size());
  }
  KILN_ASSIGN_OR_RETURN(MatrixBatchShape a_shape, MatrixOperand(instruction, 0));
  KILN_ASSIGN_OR_RETURN(MatrixBatchShape b_shape, MatrixOperand(instruction, 1));
  KILN_ASSIGN_OR_RETURN(char side, LetterAttribute(instruction, "side", "LR"));
  KILN_ASSIGN_OR_RETURN(char uplo, LetterAttribute(instruction, "uplo", "LU"));
  KILN_ASSIGN_OR_RETURN(char trans, LetterAttribute(instruction, "trans_x", "NTC"));
  KILN_ASSIGN_OR_RETURN(char diag, LetterAttribute(instruction, "diag", "NU"));
  const int64_t order = side == 'L' ? b_shape.rows : b_shape.cols;
  if (a_shape.batch_dims != b_shape.batch_dims || a_shape.rows != a_shape.cols || a_shape.rows != order) {
    return CannotExpand(instruction, "operand 0 ", instruction.operand(0)->shape.ToString(),
                        " is not a square matrix of order ", order, " for each matrix of operand 1 ",
                        instruction.operand(1)->shape.ToString(), " (side ", side, ")");
  }
  const Shape& b_full = instruction.operand(1)->shape;
  if (!instruction.shape.Compatible(b_full)) {
    return CannotExpand(instruction, "its result ", instruction.shape.ToString(), " is not ",
                        b_full.ToString());
  }
  const ElementType type = a_shape.type;
  const int64_t batch = a_shape.batch;
  const int64_t n = order;
  const int64_t rhs = side == 'L' ? b_shape.cols : b_shape.rows;
  const std::vector<int64_t> square = {batch, n, n};

  Builder builder("trsm_expansion");
  Op a = builder.Reshape(builder.Parameter(0, instruction.operand(0)->shape, "a"), square);
  Op b = builder.Reshape(builder.Parameter(1, b_full, "b"),
                         std::vector<int64_t>{batch, b_shape.rows, b_shape.cols});
  Op triangle =
      builder.Select(TriangleMask(builder, square, uplo == 'L'), a, Filled(builder, type, 0, square));
  if (diag == 'U') {
    Op on_diagonal = builder.Eq(IndexGrid(builder, square, 1), IndexGrid(builder, square, 2));
    triangle = builder.Select(on_diagonal, Filled(builder, type, 1, square), triangle);
  }
  const int64_t swap[] = {0, 2, 1};
  bool lower = uplo == 'L';
  Op t = triangle;
  if (trans == 'T') t = builder.Transpose(triangle, swap);
  if (trans == 'C') t = Adjoint(builder, triangle, type);
  if (trans != 'N') lower = !lower;
  Op r = b;
  if (side == 'R') {
    t = builder.Transpose(t, swap);
    r = builder.Transpose(b, swap);
    lower = !lower;
  }
  const int64_t rows_and_columns[] = {1, 2};
  const int64_t rows_only[] = {1};
  if (!lower) {
    t = builder.Rev(t, rows_and_columns);
    r = builder.Rev(r, rows_only);
  }
  // Blocks of nb rows per trip (PanelWidth), the matrix padded with an
  // identity block and R with zero rows to a multiple of nb.
  const int64_t nb = PanelWidth(n);
  const int64_t padded = RoundedUp(n, nb);
  const int64_t solution_dims[] = {batch, n, rhs};
  const std::vector<Op> init = {
      PaddedMatrices(builder, t, type, square, padded, padded, /*unit_diagonal=*/true),
      PaddedMatrices(builder, r, type, solution_dims, padded, rhs, /*unit_diagonal=*/false),
      Filled(builder, type, 0, std::vector<int64_t>{batch, padded, rhs})};
  Status row_loop_error = OkStatus();
  auto trip = [&](Builder& s, Op k, const std::vector<Op>& state) -> std::vector<Op> {
    Op matrix = state[0], right = state[1], x = state[2];
    Op zero = s.ConstantR0<int32_t>(0);
    Op first = s.Mul(k, s.ConstantR0<int32_t>(static_cast<int32_t>(nb)));
    const Op rows_at[] = {zero, first, zero};
    const Op diagonal_at[] = {zero, first, first};
    const int64_t block_rows[] = {batch, nb, padded};
    const int64_t solution_rows[] = {batch, nb, rhs};
    const int64_t diagonal_block[] = {batch, nb, nb};
    DotDimensionNumbers dims;
    dims.lhs_contracting_dimensions = {2};
    dims.rhs_contracting_dimensions = {1};
    dims.lhs_batch_dimensions = {0};
    dims.rhs_batch_dimensions = {0};
    // The rows of X not yet found are zero, so this is T[block, :block] X.
    Op known = s.DotGeneral(s.DynamicSlice(matrix, rows_at, block_rows), x, dims);
    Op residual = s.Sub(s.DynamicSlice(right, rows_at, solution_rows), known);
    // Solve the diagonal block D Y = residual by substitution, one row per
    // step of an inner loop (PanelColumnLoop, so the module does not grow
    // with nb): y_q = (residual_q - D[q, :q] Y[:q]) / D[q, q], Y's later
    // rows zero.
    Op block = s.DynamicSlice(matrix, diagonal_at, diagonal_block);
    auto row_step = [&](Builder& r, Op q, const std::vector<Op>& rows) -> std::vector<Op> {
      Op y = rows[0], d = rows[1], res = rows[2];
      Op origin = r.ConstantR0<int32_t>(0);
      DotDimensionNumbers row_times_block;
      row_times_block.lhs_contracting_dimensions = {1};
      row_times_block.rhs_contracting_dimensions = {1};
      row_times_block.lhs_batch_dimensions = {0};
      row_times_block.rhs_batch_dimensions = {0};
      const int64_t per_row[] = {batch, rhs};
      const int64_t along_batch[] = {0};
      const int64_t batch_and_column[] = {0, 2};
      const Op row_at[] = {origin, q, origin};
      const int64_t one_block_row[] = {batch, 1, nb};
      const int64_t one_solution_row[] = {batch, 1, rhs};
      Op d_row = r.Reshape(r.DynamicSlice(d, row_at, one_block_row), std::vector<int64_t>{batch, nb});
      const Op pivot_at[] = {origin, q};
      const int64_t one_element[] = {batch, 1};
      Op pivot = r.Reshape(r.DynamicSlice(d_row, pivot_at, one_element), std::vector<int64_t>{batch});
      Op found = r.DotGeneral(d_row, y, row_times_block);  // Y's rows q.. are still zero
      Op value = r.Div(r.Sub(r.Reshape(r.DynamicSlice(res, row_at, one_solution_row), per_row), found),
                       r.BroadcastInDim(pivot, per_row, along_batch));
      Op is_row = r.Eq(IndexGrid(r, solution_rows, 1), r.BroadcastInDim(q, solution_rows, {}));
      return {r.Select(is_row, r.BroadcastInDim(value, solution_rows, batch_and_column), y), d, res};
    };
    StatusOr<std::vector<Op>> solved =
        PanelColumnLoop(s, nb, {Filled(s, type, 0, solution_rows), block, residual}, row_step);
    if (!solved.ok()) {
      row_loop_error = solved.status();
      return state;
    }
    Op y = (*solved)[0];
    return {matrix, right, s.DynamicUpdateSlice(x, y, rows_at)};
  };
  KILN_ASSIGN_OR_RETURN(std::vector<Op> final_state, CountedLoop(builder, padded / nb, init, trip));
  KILN_RETURN_IF_ERROR(row_loop_error);
  const int64_t origin[] = {0, 0, 0};
  const int64_t unit_stride[] = {1, 1, 1};
  Op x = builder.Slice(final_state[2], origin, solution_dims, unit_stride);
  if (!lower) x = builder.Rev(x, rows_only);
  if (side == 'R') x = builder.Transpose(x, swap);
  return builder.Build(builder.Reshape(x, b_full.dimensions()));
}

}  // namespace kiln
