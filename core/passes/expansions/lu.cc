// getrf (lapack_?getrf_ffi) as a loop of ordinary HLO: LU factorisation
// with partial pivoting, one column per trip (LAPACK's unblocked ?getf2),
// vectorised over the matrix and the batch. Trip j:
//  - picks the pivot row p >= j of column j whose |re| + |im| (|x| for real
//    types) is largest, the first such row on ties, as BLAS's i?amax; a
//    column whose candidates are all NaN keeps row j;
//  - records p + 1 (LAPACK's pivots are 1-based) and swaps rows j and p;
//  - divides the column below the diagonal by the pivot unless the pivot is
//    exactly zero, where info becomes j + 1 if it was 0 (LAPACK goes on
//    factoring; the column below is all zero then);
//  - subtracts the outer product of that column and row j from the trailing
//    block (rows and columns after j).
// The permutation JAX builds from the pivots is HLO already.
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
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> max_real, ScalarComputation(Opcode::kMaximum, real));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> min_index,
                        ScalarComputation(Opcode::kMinimum, ElementType::kS32));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> add, ScalarComputation(Opcode::kAdd, type));
  const std::vector<int64_t> matrix = {batch, m, n};
  const std::vector<int64_t> column = {batch, m};
  const std::vector<int64_t> row = {batch, n};
  const std::vector<int64_t> per_matrix = {batch};

  Builder builder("getrf_expansion");
  Op a = builder.Reshape(builder.Parameter(0, operand_shape, "a"), matrix);
  const std::vector<Op> init = {a, Filled(builder, ElementType::kS32, 0, std::vector<int64_t>{batch, steps}),
                                Filled(builder, ElementType::kS32, 0, per_matrix)};
  auto trip = [&](Builder& b, Op j, const std::vector<Op>& state) -> std::vector<Op> {
    Op lu = state[0], pivots = state[1], info = state[2];
    Op zero = b.ConstantR0<int32_t>(0);
    const Op column_at[] = {zero, zero, j};
    const Op row_at[] = {zero, j, zero};
    const int64_t column_slice[] = {batch, m, 1};
    const int64_t row_slice[] = {batch, 1, n};
    const int64_t along_batch[] = {0};
    const int64_t reduce_rows[] = {1};

    // The pivot row: the first largest |re| + |im| at or below row j.
    Op values = b.Reshape(b.DynamicSlice(lu, column_at, column_slice), column);
    Op magnitude = IsComplex(type) ? b.Add(b.Abs(b.Real(values)), b.Abs(b.Imag(values))) : b.Abs(values);
    Op rows = IndexGrid(b, column, 1);
    Op j_rows = b.BroadcastInDim(j, column, {});
    Op candidate = b.Ge(rows, j_rows);
    Op score = b.Select(candidate, magnitude, Filled(b, real, -1, column));
    Op best = b.Reduce(score, ScalarOf(b, real, -1), *max_real, reduce_rows);
    Op is_best = b.And(candidate, b.Eq(score, b.BroadcastInDim(best, column, along_batch)));
    Op first_best = b.Reduce(b.Select(is_best, rows, Filled(b, ElementType::kS32, double(m), column)),
                             b.ConstantR0<int32_t>(static_cast<int32_t>(m)), *min_index, reduce_rows);
    Op j_each = b.BroadcastInDim(j, per_matrix, {});
    Op pivot_row =
        b.Select(b.Lt(first_best, b.ConstantR0<int32_t>(static_cast<int32_t>(m))), first_best, j_each);
    Op one = b.ConstantR0<int32_t>(1);
    const Op pivot_at[] = {zero, j};
    Op next_pivots = b.DynamicUpdateSlice(
        pivots, b.Reshape(b.Add(pivot_row, one), std::vector<int64_t>{batch, 1}), pivot_at);

    // Swap rows j and p (p differs per matrix: a mask, not a slice).
    Op matrix_rows = IndexGrid(b, matrix, 1);
    Op is_pivot_row = b.Eq(matrix_rows, b.BroadcastInDim(pivot_row, matrix, along_batch));
    Op row_j = b.Reshape(b.DynamicSlice(lu, row_at, row_slice), row);
    Op row_p = b.Reduce(b.Select(is_pivot_row, lu, Filled(b, type, 0, matrix)), ScalarOf(b, type, 0), *add,
                        reduce_rows);
    const int64_t batch_and_column[] = {0, 2};
    Op swapped = b.Select(is_pivot_row, b.BroadcastInDim(row_j, matrix, batch_and_column), lu);
    swapped = b.DynamicUpdateSlice(swapped, b.Reshape(row_p, row_slice), row_at);

    // Scale the column below the pivot, unless the pivot is zero.
    const Op diagonal_at[] = {zero, j, j};
    const int64_t one_element[] = {batch, 1, 1};
    Op pivot = b.Reshape(b.DynamicSlice(swapped, diagonal_at, one_element), per_matrix);
    Op nonzero = b.Ne(pivot, ScalarOf(b, type, 0));
    Op pivoted_column = b.Reshape(b.DynamicSlice(swapped, column_at, column_slice), column);
    Op below = b.Gt(rows, j_rows);
    Op scaled = b.Select(b.BroadcastInDim(nonzero, column, along_batch),
                         b.Div(pivoted_column, b.BroadcastInDim(pivot, column, along_batch)), pivoted_column);
    Op multipliers = b.Select(below, scaled, pivoted_column);

    // Rank-1 update of the trailing block.
    Op outer = b.Mul(b.BroadcastInDim(multipliers, matrix, std::vector<int64_t>{0, 1}),
                     b.BroadcastInDim(row_p, matrix, batch_and_column));
    Op trailing = b.And(b.Gt(matrix_rows, b.BroadcastInDim(j, matrix, {})),
                        b.Gt(IndexGrid(b, matrix, 2), b.BroadcastInDim(j, matrix, {})));
    Op updated = b.Select(trailing, b.Sub(swapped, outer), swapped);
    updated = b.DynamicUpdateSlice(updated, b.Reshape(multipliers, column_slice), column_at);

    Op fails_here = b.And(b.Eq(info, Filled(b, ElementType::kS32, 0, per_matrix)), b.Not(nonzero));
    Op next_info = b.Select(fails_here, b.Add(j_each, b.BroadcastInDim(one, per_matrix, {})), info);
    return {updated, next_pivots, next_info};
  };
  KILN_ASSIGN_OR_RETURN(std::vector<Op> final_state, CountedLoop(builder, steps, init, trip));
  const Op results[] = {builder.Reshape(final_state[0], operand_shape.dimensions()),
                        builder.Reshape(final_state[1], pivot_dims),
                        builder.Reshape(final_state[2], matrices.batch_dims)};
  return builder.Build(builder.Tuple(results));
}

}  // namespace kiln
