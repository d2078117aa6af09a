// getrf (lapack_?getrf_ffi) as a loop of ordinary HLO: a blocked, right-
// looking LU factorisation with partial pivoting, as LAPACK's ?getrf. The
// matrix is padded with zeros to a multiple of the panel width nb
// (PanelWidth of min(m, n)) and each while trip handles one panel of nb
// columns starting at column i:
//  - the panel (all rows, nb columns) is factored column by column as
//    unblocked ?getf2 does, in an inner loop (PanelColumnLoop: one column
//    step's instructions built a few times, not nb times). Column j = i + t: the pivot row p >= j
//    (below the real rows' end m) whose |re| + |im| (|x| for real types) is
//    largest, the first on ties, as BLAS's i?amax (a column whose candidates
//    are all NaN keeps row j); p + 1 recorded (LAPACK's pivots are 1-based);
//    rows j and p swapped in the panel and in the trip's row permutation;
//    the column below the diagonal divided by the pivot unless it is exactly
//    zero, where info becomes j + 1 if it was 0 (LAPACK goes on; the column
//    below is all zero then); the panel's later columns lose the outer
//    product of that column and row j;
//  - the trip's row permutation is applied to the whole matrix (one
//    gather) and the factored panel written back;
//  - U12 = L11^-1 A12 for the panel's rows right of it (L11 unit lower
//    triangular, inverted by UnitLowerInverse, a loop of row
//    substitution, then one dot) and the trailing
//    matrix loses L21 U12, one dot, where most of the flops go.
// So a device runs min(m, n) / nb trips, each one host round trip, instead
// of min(m, n). The permutation JAX builds from the pivots is HLO already.
#include <algorithm>

#include "core/passes/expansions/expansions.h"
#include "core/passes/expansions/lapack_expansion_util.h"

namespace kiln {

bool MatchesLu(const Instruction& instruction) {
  return expansions::IsLapackCall(instruction, LapackRoutine::kGetrf);
}

StatusOr<std::unique_ptr<Module>> ExpandLu(const Instruction& instruction) {
  using namespace expansions;  // NOLINT: this folder's helpers, in this function only (unity builds)
  if (instruction.operands.size() != 1) {
    return CannotExpand(instruction, "it takes 1 operand, got ", instruction.operands.size());
  }
  KILN_ASSIGN_OR_RETURN(MatrixBatchShape matrices, MatrixOperand(instruction, 0));
  const Shape& operand_shape = instruction.operand(0)->shape;
  const int64_t m = matrices.rows;
  const int64_t n = matrices.cols;
  const int64_t steps = std::min(m, n);
  std::vector<int64_t> pivot_dims = matrices.batch_dims;
  pivot_dims.push_back(steps);
  const Shape pivots_shape(ElementType::kS32, pivot_dims);
  const Shape info_shape(ElementType::kS32, matrices.batch_dims);
  if (!instruction.shape.Compatible(Shape::Tuple({operand_shape, pivots_shape, info_shape}))) {
    return CannotExpand(instruction, "its result ", instruction.shape.ToString(), " is not (",
                        operand_shape.ToString(), ", ", pivots_shape.ToString(), ", ", info_shape.ToString(),
                        ")");
  }
  const ElementType type = matrices.type;
  const ElementType real = ComplexComponentType(type);
  const int64_t batch = matrices.batch;
  const int64_t nb = PanelWidth(steps);
  const int64_t padded_rows = RoundedUp(m, nb);
  const int64_t padded_cols = RoundedUp(n, nb);
  const int64_t padded_steps = RoundedUp(steps, nb);
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> max_real, ScalarComputation(Opcode::kMaximum, real));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> min_index,
                        ScalarComputation(Opcode::kMinimum, ElementType::kS32));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> add, ScalarComputation(Opcode::kAdd, type));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> add_index,
                        ScalarComputation(Opcode::kAdd, ElementType::kS32));
  const std::vector<int64_t> matrix = {batch, m, n};
  const std::vector<int64_t> padded = {batch, padded_rows, padded_cols};
  const std::vector<int64_t> panel_dims = {batch, padded_rows, nb};
  const std::vector<int64_t> column = {batch, padded_rows};
  const std::vector<int64_t> index_column = {batch, padded_rows, 1};
  const std::vector<int64_t> carried_dims = {batch, padded_rows, nb + 1};
  const std::vector<int64_t> carried_row = {batch, nb + 1};
  const std::vector<int64_t> per_matrix = {batch};
  const int64_t along_batch[] = {0};
  const int64_t batch_and_row[] = {0, 1};
  const int64_t batch_and_column[] = {0, 2};
  const int64_t reduce_rows[] = {1};
  const int32_t no_row = static_cast<int32_t>(padded_rows);

  Builder builder("getrf_expansion");
  Op a = builder.Reshape(builder.Parameter(0, operand_shape, "a"), matrix);
  const std::vector<Op> init = {
      PaddedMatrices(builder, a, type, matrix, padded_rows, padded_cols, /*unit_diagonal=*/false),
      Filled(builder, ElementType::kS32, 0, std::vector<int64_t>{batch, padded_steps}),
      Filled(builder, ElementType::kS32, 0, per_matrix)};
  // One column j = first + t of the panel, as ?getf2 does it. State: the
  // panel (with its row-index column), the panel's pivots, info, first
  // (read only).
  auto column_step = [&](Builder& b, Op t, const std::vector<Op>& state) -> std::vector<Op> {
    Op panel = state[0], panel_pivots = state[1], info = state[2], first = state[3];
    Op zero = b.ConstantR0<int32_t>(0);
    Op one = b.ConstantR0<int32_t>(1);
    Op rows = IndexGrid(b, column, 1);
    Op panel_rows = IndexGrid(b, carried_dims, 1);
    Op carried_columns = IndexGrid(b, carried_row, 1);
    Op j = b.Add(first, t);
    Op active = b.Lt(j, b.ConstantR0<int32_t>(static_cast<int32_t>(steps)));  // not a padded column
    Op j_rows = b.BroadcastInDim(j, column, {});
    Op j_each = b.BroadcastInDim(j, per_matrix, {});

    // The pivot row: the first largest |re| + |im| at or below row j.
    const Op column_at[] = {zero, zero, t};
    const int64_t one_column[] = {batch, padded_rows, 1};
    Op values = b.Reshape(b.DynamicSlice(panel, column_at, one_column), column);
    Op magnitude = IsComplex(type) ? b.Add(b.Abs(b.Real(values)), b.Abs(b.Imag(values))) : b.Abs(values);
    Op candidate = b.And(b.Ge(rows, j_rows), b.Lt(rows, b.ConstantR0<int32_t>(static_cast<int32_t>(m))));
    Op score = b.Select(candidate, magnitude, Filled(b, real, -1, column));
    Op best = b.Reduce(score, ScalarOf(b, real, -1), *max_real, reduce_rows);
    Op is_best = b.And(candidate, b.Eq(score, b.BroadcastInDim(best, column, along_batch)));
    Op first_best = b.Reduce(b.Select(is_best, rows, Filled(b, ElementType::kS32, no_row, column)),
                             b.ConstantR0<int32_t>(no_row), *min_index, reduce_rows);
    Op found =
        b.And(b.BroadcastInDim(active, per_matrix, {}), b.Lt(first_best, b.ConstantR0<int32_t>(no_row)));
    Op pivot_row = b.Select(found, first_best, j_each);
    const std::vector<int64_t> pivot_dims_here = {batch, nb};
    panel_pivots = b.Select(b.Eq(IndexGrid(b, pivot_dims_here, 1), b.BroadcastInDim(t, pivot_dims_here, {})),
                            b.BroadcastInDim(b.Add(pivot_row, b.BroadcastInDim(one, per_matrix, {})),
                                             pivot_dims_here, along_batch),
                            panel_pivots);

    // Rows j and p (p differs per matrix: a gather and masks, not slices).
    const Op row_at[] = {zero, j, zero};
    Op row_j = b.Reshape(b.DynamicSlice(panel, row_at, std::vector<int64_t>{batch, 1, nb + 1}), carried_row);
    const Op row_index_parts[] = {IndexGrid(b, std::vector<int64_t>{batch, 1}, 0),
                                  b.Reshape(pivot_row, std::vector<int64_t>{batch, 1})};
    GatherDimensionNumbers one_row;
    one_row.offset_dims = {1};
    one_row.collapsed_slice_dims = {0, 1};
    one_row.start_index_map = {0, 1};
    one_row.index_vector_dim = 1;
    const int64_t one_row_sizes[] = {1, 1, nb + 1};
    Op row_p = b.Gather(panel, b.ConcatInDim(row_index_parts, 1), one_row, one_row_sizes);
    Op is_row_j = b.Eq(panel_rows, b.BroadcastInDim(j, carried_dims, {}));
    Op is_row_p = b.Eq(panel_rows, b.BroadcastInDim(pivot_row, carried_dims, along_batch));
    Op swapped = b.Select(is_row_j, b.BroadcastInDim(row_p, carried_dims, batch_and_column),
                          b.Select(is_row_p, b.BroadcastInDim(row_j, carried_dims, batch_and_column), panel));

    // Scale the column below the pivot, unless the pivot is zero.
    const Op element_at[] = {zero, t};
    const int64_t one_element[] = {batch, 1};
    Op pivot = b.Reshape(b.DynamicSlice(row_p, element_at, one_element), per_matrix);
    Op nonzero = b.Ne(pivot, ScalarOf(b, type, 0));
    Op pivoted = b.Reshape(b.DynamicSlice(swapped, column_at, one_column), column);
    Op below = b.Gt(rows, j_rows);
    Op scaled = b.Select(b.BroadcastInDim(nonzero, column, along_batch),
                         b.Div(pivoted, b.BroadcastInDim(pivot, column, along_batch)), pivoted);
    Op multipliers = b.Select(below, scaled, Filled(b, type, 0, column));

    // Rank-1 update of the panel's later columns (not the index column),
    // below row j.
    Op later = b.Select(b.And(b.Gt(carried_columns, b.BroadcastInDim(t, carried_row, {})),
                              b.Lt(carried_columns, b.ConstantR0<int32_t>(static_cast<int32_t>(nb)))),
                        row_p, Filled(b, type, 0, carried_row));
    Op update = b.Mul(b.BroadcastInDim(multipliers, carried_dims, batch_and_row),
                      b.BroadcastInDim(later, carried_dims, batch_and_column));
    Op is_column = b.Eq(IndexGrid(b, carried_dims, 2), b.BroadcastInDim(t, carried_dims, {}));
    panel =
        b.Select(is_column, b.BroadcastInDim(b.Select(below, scaled, pivoted), carried_dims, batch_and_row),
                 b.Sub(swapped, update));

    Op fails_here = b.And(b.And(b.Eq(info, Filled(b, ElementType::kS32, 0, per_matrix)), b.Not(nonzero)),
                          b.BroadcastInDim(active, per_matrix, {}));
    info = b.Select(fails_here, b.Add(j_each, b.BroadcastInDim(one, per_matrix, {})), info);
    return {panel, panel_pivots, info, first};
  };
  Status inner_loop_error = OkStatus();
  auto trip = [&](Builder& b, Op k, const std::vector<Op>& state) -> std::vector<Op> {
    Op lu = state[0], pivots = state[1], info = state[2];
    Op zero = b.ConstantR0<int32_t>(0);
    Op first = b.Mul(k, b.ConstantR0<int32_t>(static_cast<int32_t>(nb)));
    const Op panel_at[] = {zero, zero, first};
    // The panel, with one more column holding each row's index: the row
    // interchanges move it along, so afterwards it is the trip's permutation.
    Op row_numbers = b.ConvertElementType(IndexGrid(b, column, 1), real);
    if (IsComplex(type)) row_numbers = b.Complex(row_numbers, Filled(b, real, 0, column));
    Op panel = b.ConcatInDim(
        std::vector<Op>{b.DynamicSlice(lu, panel_at, panel_dims), b.Reshape(row_numbers, index_column)}, 2);
    StatusOr<std::vector<Op>> factored = PanelColumnLoop(
        b, nb, {panel, Filled(b, ElementType::kS32, 0, std::vector<int64_t>{batch, nb}), info, first},
        column_step);
    if (!factored.ok()) {
      inner_loop_error = factored.status();
      return state;
    }
    panel = (*factored)[0];
    Op panel_pivots = (*factored)[1];
    info = (*factored)[2];
    const Op pivots_at[] = {zero, first};
    pivots = b.DynamicUpdateSlice(pivots, panel_pivots, pivots_at);
    Op index_values = b.Reshape(b.SliceInDim(panel, nb, nb + 1, 1, 2), column);
    Op permutation =
        b.ConvertElementType(IsComplex(type) ? b.Real(index_values) : index_values, ElementType::kS32);
    panel = b.SliceInDim(panel, 0, nb, 1, 2);

    // The trip's row interchanges on the whole matrix, then the panel.
    const int64_t index_dims[] = {batch, padded_rows, 1};
    const Op index_parts[] = {IndexGrid(b, index_dims, 0), b.Reshape(permutation, index_dims)};
    GatherDimensionNumbers whole_rows;
    whole_rows.offset_dims = {2};
    whole_rows.collapsed_slice_dims = {0, 1};
    whole_rows.start_index_map = {0, 1};
    whole_rows.index_vector_dim = 2;
    const int64_t one_row[] = {1, 1, padded_cols};
    lu = b.Gather(lu, b.ConcatInDim(index_parts, 2), whole_rows, one_row);
    lu = b.DynamicUpdateSlice(lu, panel, panel_at);

    // U12 = L11^-1 A12, right of the panel.
    const Op block_rows_at[] = {zero, first, zero};
    const int64_t diagonal_block[] = {batch, nb, nb};
    const int64_t block_rows[] = {batch, nb, padded_cols};
    StatusOr<Op> inverse =
        UnitLowerInverse(b, b.DynamicSlice(panel, block_rows_at, diagonal_block), type, batch, nb);
    if (!inverse.ok()) {
      inner_loop_error = inverse.status();
      return state;
    }
    Op a12 = b.DynamicSlice(lu, block_rows_at, block_rows);
    DotDimensionNumbers matrix_product;
    matrix_product.lhs_contracting_dimensions = {2};
    matrix_product.rhs_contracting_dimensions = {1};
    matrix_product.lhs_batch_dimensions = {0};
    matrix_product.rhs_batch_dimensions = {0};
    Op u12 = b.DotGeneral(*inverse, a12, matrix_product);
    Op next = b.Add(first, b.ConstantR0<int32_t>(static_cast<int32_t>(nb)));
    Op right = b.Ge(IndexGrid(b, block_rows, 2), b.BroadcastInDim(next, block_rows, {}));
    lu = b.DynamicUpdateSlice(lu, b.Select(right, u12, a12), block_rows_at);

    // Trailing update: A22 -= L21 U12 (zero outside the trailing block).
    Op l21 = b.Select(b.Ge(IndexGrid(b, panel_dims, 1), b.BroadcastInDim(next, panel_dims, {})), panel,
                      Filled(b, type, 0, panel_dims));
    Op u12_right = b.Select(right, u12, Filled(b, type, 0, block_rows));
    lu = b.Sub(lu, b.DotGeneral(l21, u12_right, matrix_product));
    return {lu, pivots, info};
  };
  KILN_ASSIGN_OR_RETURN(std::vector<Op> final_state, CountedLoop(builder, padded_steps / nb, init, trip));
  KILN_RETURN_IF_ERROR(inner_loop_error);
  const int64_t origin[] = {0, 0, 0};
  const int64_t unit_stride[] = {1, 1, 1};
  const int64_t pivot_start[] = {0, 0};
  const int64_t pivot_limit[] = {batch, steps};
  const int64_t pivot_stride[] = {1, 1};
  const Op results[] = {
      builder.Reshape(builder.Slice(final_state[0], origin, matrix, unit_stride), operand_shape.dimensions()),
      builder.Reshape(builder.Slice(final_state[1], pivot_start, pivot_limit, pivot_stride), pivot_dims),
      builder.Reshape(final_state[2], matrices.batch_dims)};
  return builder.Build(builder.Tuple(results));
}

}  // namespace kiln
