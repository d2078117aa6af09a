// potrf (lapack_?potrf_ffi) as a loop of ordinary HLO: a blocked, right-
// looking Cholesky factorisation, as LAPACK's ?potrf. The matrix is padded
// to a multiple of the panel width nb (PanelWidth: 32 or 64 past 32
// columns; the padding is an identity block, so it stays positive definite)
// and each while trip factors one panel of nb columns:
//  - the panel (all rows, nb columns) is factored column by column as
//    unblocked ?potf2 does, in an inner loop (PanelColumnLoop: one column
//    step's instructions, built a few times, not nb times): the pivot's
//    square root, the column below it scaled, a rank-1 update of the panel's
//    later columns;
//  - the trailing matrix loses L21 L21^H, one batched dot (L21 being the
//    panel's rows below it, zero elsewhere), where most of the flops go.
// So a device runs n / nb trips, each one host round trip, instead of n.
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
  const int64_t nb = PanelWidth(n);
  const int64_t padded = RoundedUp(n, nb);
  const std::vector<int64_t> square = {batch, n, n};
  const std::vector<int64_t> padded_square = {batch, padded, padded};
  const std::vector<int64_t> panel_dims = {batch, padded, nb};
  const std::vector<int64_t> column = {batch, padded};
  const std::vector<int64_t> per_matrix = {batch};
  const int64_t along_batch[] = {0};
  const int64_t batch_and_row[] = {0, 1};
  const int64_t batch_and_column[] = {0, 2};

  Builder builder("potrf_expansion");
  Op input = builder.Parameter(0, operand_shape, "a");
  Op a = builder.Reshape(input, square);
  // The matrix whose lower triangle is factored.
  Op lower_input = uplo == 'L' ? a : Adjoint(builder, a, type);
  const std::vector<Op> init = {
      PaddedMatrices(builder, lower_input, type, square, padded, padded, /*unit_diagonal=*/true),
      Filled(builder, ElementType::kS32, 0, per_matrix), Filled(builder, type, 0, per_matrix)};
  // One column j = first + t of the panel, as ?potf2 does it: the pivot's
  // square root, the column below it scaled, a rank-1 update of the panel's
  // later columns. State: panel, info, failed pivot, first (read only).
  auto column_step = [&](Builder& b, Op t, const std::vector<Op>& state) -> std::vector<Op> {
    Op panel = state[0], info = state[1], failed_pivot = state[2], first = state[3];
    Op zero = b.ConstantR0<int32_t>(0);
    Op rows = IndexGrid(b, column, 1);
    Op j = b.Add(first, t);
    const Op column_at[] = {zero, zero, t};
    const int64_t one_column[] = {batch, padded, 1};
    Op values = b.Reshape(b.DynamicSlice(panel, column_at, one_column), column);
    const Op diagonal_at[] = {zero, j};
    const int64_t one_element[] = {batch, 1};
    Op diagonal = b.Reshape(b.DynamicSlice(values, diagonal_at, one_element), per_matrix);
    Op pivot = IsComplex(type) ? b.Real(diagonal) : diagonal;
    Op positive = b.Gt(pivot, ScalarOf(b, real, 0));  // false for NaN, as ?potf2's check
    Op root = b.Sqrt(pivot);
    Op root_typed = IsComplex(type) ? b.Complex(root, Filled(b, real, 0, per_matrix)) : root;
    Op j_rows = b.BroadcastInDim(j, column, {});
    Op below = b.Gt(rows, j_rows);
    Op scaled = b.Select(below, b.Div(values, b.BroadcastInDim(root_typed, column, along_batch)),
                         Filled(b, type, 0, column));
    Op factored =
        b.Select(below, scaled,
                 b.Select(b.Eq(rows, j_rows), b.BroadcastInDim(root_typed, column, along_batch), values));
    // Rank-1 update of the panel's later columns s: L[r, j] conj(L[first + s, j])
    // (zero for s <= t, as `scaled` is zero on and above row j).
    const Op panel_rows_at[] = {zero, first};
    const int64_t panel_rows[] = {batch, nb};
    Op later = Conjugate(b, b.DynamicSlice(scaled, panel_rows_at, panel_rows), type);
    Op update = b.Mul(b.BroadcastInDim(scaled, panel_dims, batch_and_row),
                      b.BroadcastInDim(later, panel_dims, batch_and_column));
    Op is_column = b.Eq(IndexGrid(b, panel_dims, 2), b.BroadcastInDim(t, panel_dims, {}));
    panel = b.Select(is_column, b.BroadcastInDim(factored, panel_dims, batch_and_row), b.Sub(panel, update));
    // Padded columns have pivot 1, so `fails_here` is only ever a real column.
    Op fails_here = b.And(b.Eq(info, Filled(b, ElementType::kS32, 0, per_matrix)), b.Not(positive));
    info = b.Select(fails_here, b.BroadcastInDim(b.Add(j, b.ConstantR0<int32_t>(1)), per_matrix, {}), info);
    failed_pivot = b.Select(fails_here, diagonal, failed_pivot);
    return {panel, info, failed_pivot, first};
  };
  Status column_loop_error = OkStatus();
  auto trip = [&](Builder& b, Op k, const std::vector<Op>& state) -> std::vector<Op> {
    Op matrix = state[0], info = state[1], failed_pivot = state[2];
    Op zero = b.ConstantR0<int32_t>(0);
    Op first = b.Mul(k, b.ConstantR0<int32_t>(static_cast<int32_t>(nb)));
    const Op panel_at[] = {zero, zero, first};
    Op panel = b.DynamicSlice(matrix, panel_at, panel_dims);
    StatusOr<std::vector<Op>> factored =
        PanelColumnLoop(b, nb, {panel, info, failed_pivot, first}, column_step);
    if (!factored.ok()) {
      column_loop_error = factored.status();
      return state;
    }
    panel = (*factored)[0];
    info = (*factored)[1];
    failed_pivot = (*factored)[2];
    matrix = b.DynamicUpdateSlice(matrix, panel, panel_at);
    // Trailing update: A -= L21 L21^H, L21 the panel's rows past it.
    Op next = b.Add(first, b.ConstantR0<int32_t>(static_cast<int32_t>(nb)));
    Op l21 = b.Select(b.Ge(IndexGrid(b, panel_dims, 1), b.BroadcastInDim(next, panel_dims, {})), panel,
                      Filled(b, type, 0, panel_dims));
    DotDimensionNumbers outer;
    outer.lhs_contracting_dimensions = {2};
    outer.rhs_contracting_dimensions = {2};
    outer.lhs_batch_dimensions = {0};
    outer.rhs_batch_dimensions = {0};
    matrix = b.Sub(matrix, b.DotGeneral(l21, Conjugate(b, l21, type), outer));
    return {matrix, info, failed_pivot};
  };
  KILN_ASSIGN_OR_RETURN(std::vector<Op> final_state, CountedLoop(builder, padded / nb, init, trip));
  KILN_RETURN_IF_ERROR(column_loop_error);
  const int64_t origin[] = {0, 0, 0};
  const int64_t unit_stride[] = {1, 1, 1};
  Op factored = builder.Slice(final_state[0], origin, square, unit_stride);
  Op info = final_state[1];
  // A matrix that failed at column j = info - 1 keeps the input from column
  // j on, with the failed pivot on the diagonal, as ?potf2 leaves it.
  Op failed_at =
      builder.BroadcastInDim(builder.Sub(info, builder.ConstantR0<int32_t>(1)), square, along_batch);
  Op failed = builder.BroadcastInDim(builder.Gt(info, builder.ConstantR0<int32_t>(0)), square, along_batch);
  Op rows = IndexGrid(builder, square, 1);
  Op columns = IndexGrid(builder, square, 2);
  Op failed_entry = builder.Select(builder.And(builder.Eq(rows, failed_at), builder.Eq(columns, failed_at)),
                                   builder.BroadcastInDim(final_state[2], square, along_batch), lower_input);
  Op kept = builder.Select(builder.And(failed, builder.Ge(columns, failed_at)), failed_entry, factored);
  Op lower = builder.Select(TriangleMask(builder, square, /*lower=*/true), kept, lower_input);
  Op factor = uplo == 'L' ? lower : Adjoint(builder, lower, type);
  const Op results[] = {builder.Reshape(factor, operand_shape.dimensions()),
                        builder.Reshape(info, matrices.batch_dims)};
  return builder.Build(builder.Tuple(results));
}

}  // namespace kiln
