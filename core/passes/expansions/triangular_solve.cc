// trsm (lapack_?trsm_ffi, BLAS's triangular solve with many right-hand
// sides) as a loop of ordinary HLO: substitution one row of the solution
// per trip, vectorised over the right-hand sides and the batch.
//
// Every case is first turned into one form, "T X = R with T lower
// triangular": the triangle `uplo` of A is kept (the other is never read,
// as BLAS), its diagonal replaced by ones for diag 'U'; op(A) is A, A^T or
// A^H as trans_x says; side 'R' (X op(A) = B) is op(A)^T X^T = B^T; an upper
// triangular T becomes lower by reversing its rows and columns (and R's
// rows). Trip i then computes x_i = (r_i - T[i, :] X) / T[i, i], where the
// rows of X not yet found are zero.
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
  const std::vector<int64_t> solution = {batch, n, rhs};

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
  const std::vector<Op> init = {t, r, Filled(builder, type, 0, solution)};
  auto trip = [&](Builder& s, Op i, const std::vector<Op>& state) -> std::vector<Op> {
    Op matrix = state[0], right = state[1], x = state[2];
    Op zero = s.ConstantR0<int32_t>(0);
    const Op row_at[] = {zero, i, zero};
    const Op diagonal_at[] = {zero, i, i};
    const int64_t matrix_row[] = {batch, 1, n};
    const int64_t solution_row[] = {batch, 1, rhs};
    const int64_t one_element[] = {batch, 1, 1};
    DotDimensionNumbers dims;
    dims.lhs_contracting_dimensions = {2};
    dims.rhs_contracting_dimensions = {1};
    dims.lhs_batch_dimensions = {0};
    dims.rhs_batch_dimensions = {0};
    Op known = s.DotGeneral(s.DynamicSlice(matrix, row_at, matrix_row), x, dims);  // [batch, 1, rhs]
    Op residual = s.Sub(s.DynamicSlice(right, row_at, solution_row), known);
    Op pivot = s.Reshape(s.DynamicSlice(matrix, diagonal_at, one_element), std::vector<int64_t>{batch});
    const int64_t along_batch[] = {0};
    Op x_row = s.Div(residual, s.BroadcastInDim(pivot, solution_row, along_batch));
    return {matrix, right, s.DynamicUpdateSlice(x, x_row, row_at)};
  };
  KILN_ASSIGN_OR_RETURN(std::vector<Op> final_state, CountedLoop(builder, n, init, trip));
  Op x = final_state[2];
  if (!lower) x = builder.Rev(x, rows_only);
  if (side == 'R') x = builder.Transpose(x, swap);
  return builder.Build(builder.Reshape(x, b_full.dimensions()));
}

}  // namespace kiln
