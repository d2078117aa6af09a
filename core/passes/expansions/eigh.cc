// The eigen-decomposition of a Hermitian matrix (?syevd, ?heevd) as cyclic
// two-sided Jacobi sweeps of ordinary HLO: each loop trip rotates n/2
// disjoint pairs of rows and columns at once (A <- J^H A J, V <- V J, no transposes; the
// pairs reseated by the tournament of jacobi.h), until every off-diagonal
// entry is negligible against its diagonal pair. Only the `uplo` triangle is
// read (and the real part of the diagonal), as LAPACK does. Eigenvalues come
// ascending, as LAPACK's; each eigenvector is unique only up to a phase (and
// a rotation within a repeated eigenvalue), so the vectors may differ from
// LAPACK's in sign while A V = V diag(w) and V^H V = I hold.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/passes/expansions/expansions.h"
#include "core/passes/expansions/jacobi.h"
#include "core/passes/expansions/matrix_batch_ops.h"

namespace kiln {

bool MatchesEigh(const Instruction& instruction) {
  const BuiltinCustomCall* target = matrix_batch::LapackTargetOf(instruction);
  return target != nullptr && target->routine == LapackRoutine::kSyevd;
}

StatusOr<std::unique_ptr<Module>> ExpandEigh(const Instruction& instruction) {
  KILN_ASSIGN_OR_RETURN(matrix_batch::MatrixBatchShape shape, matrix_batch::MatrixOperand(instruction, 0));
  if (shape.rows != shape.cols) return expansions::CannotExpand(instruction, "the matrices are not square");
  if (!instruction.shape.IsTuple() || instruction.shape.tuple_shapes().size() != 3)
    return expansions::CannotExpand(instruction, "its result is not a tuple of 3");
  KILN_ASSIGN_OR_RETURN(auto attributes, ParseFfiIntegerAttributes(instruction.attrs.backend_config));
  auto uplo = attributes.find("uplo");
  auto mode = attributes.find("mode");
  if (uplo == attributes.end() || (uplo->second != 'L' && uplo->second != 'U'))
    return expansions::CannotExpand(instruction, "its attribute uplo is not 'L' or 'U'");
  if (mode == attributes.end() || (mode->second != 'V' && mode->second != 'N'))
    return expansions::CannotExpand(instruction, "its attribute mode is not 'V' or 'N'");
  const int64_t n = shape.rows;
  if (n == 0) return expansions::CannotExpand(instruction, "the matrices are empty");
  const int64_t nb = shape.batch_rank();
  const ElementType real = shape.real_type();
  const int64_t n2 = n + n % 2;
  const int64_t h = n2 / 2;
  const matrix_batch::MatrixBatchShape padded = jacobi::Reshaped(shape, n2, n2);
  const std::vector<int64_t> dims = shape.Dims({n, n});
  const std::vector<int64_t> padded_dims = padded.Dims({n2, n2});

  Builder builder("eigh");
  Op a = builder.Parameter(0, instruction.operands[0]->shape, "a");
  // The Hermitian matrix the triangle stands for.
  Op rows = expansions::IndexGrid(builder, dims, nb);
  Op cols = expansions::IndexGrid(builder, dims, nb + 1);
  Op zeros = expansions::Filled(builder, shape.type, 0.0, dims);
  Op strict = builder.Select(uplo->second == 'L' ? builder.Gt(rows, cols) : builder.Lt(rows, cols), a, zeros);
  Op diagonal =
      builder.Select(builder.Eq(rows, cols),
                     matrix_batch::RealAs(builder, matrix_batch::RealPart(builder, a), shape.type), zeros);
  Op full = builder.Add(builder.Add(strict, matrix_batch::Adjoint(builder, strict, shape)), diagonal);
  if (n2 != n) {
    full = builder.ConcatInDim(
        std::vector<Op>{full, expansions::Filled(builder, shape.type, 0.0, shape.Dims({n, 1}))}, nb + 1);
    full = builder.ConcatInDim(
        std::vector<Op>{full, expansions::Filled(builder, shape.type, 0.0, shape.Dims({1, n2}))}, nb);
  }
  const double eps = real == ElementType::kF32 ? std::numeric_limits<float>::epsilon()
                                               : std::numeric_limits<double>::epsilon();
  const double tolerance = static_cast<double>(n2) * eps;

  // The diagonal of each matrix (batch..., size), of the element type.
  auto diagonal_of = [&](Builder& b, Op x, int64_t size) {
    const matrix_batch::MatrixBatchShape square = jacobi::Reshaped(shape, size, size);
    return matrix_batch::SumOver(b, b.Mul(x, matrix_batch::Identities(b, square)), nb + 1);
  };
  auto trip = [&](Builder& b, Op matrix, Op rotations) {
    const std::vector<int64_t> pair_dims = shape.Dims({h});
    Op diag = matrix_batch::RealPart(b, diagonal_of(b, matrix, n2));
    Op alpha = jacobi::Columns(b, diag, nb, 0, h);
    Op beta = jacobi::Columns(b, diag, nb, h, n2);
    Op block = jacobi::Columns(b, jacobi::Columns(b, matrix, nb, 0, h), nb + 1, h, n2);
    Op gamma = diagonal_of(b, block, h);
    jacobi::PairRotation rotation = jacobi::RotationFor(b, alpha, beta, gamma, shape.type, pair_dims);
    Op right = jacobi::RotatePairs(b, matrix, padded, h, rotation);
    // How far from diagonal the pairs were: |gamma| / sqrt(|alpha beta|),
    // entries at rounding level against the whole matrix not counted.
    Op zero = expansions::Filled(b, real, 0.0, pair_dims);
    Op frobenius = b.Sqrt(
        matrix_batch::SumOver(b, matrix_batch::SumOver(b, matrix_batch::AbsSquared(b, matrix), nb + 1), nb));
    Op floor =
        b.Mul(b.BroadcastInDim(frobenius, pair_dims, shape.BatchAxes()), expansions::ScalarOf(b, real, eps));
    Op scale = b.Max(b.Sqrt(b.Abs(b.Mul(alpha, beta))), floor);
    Op ratio = b.Select(b.Gt(scale, zero), b.Div(b.Abs(gamma), b.Max(scale, floor)), zero);
    return jacobi::JacobiTrip{jacobi::RotatePairs(b, right, padded, h, rotation, /*rows=*/true),
                              jacobi::RotatePairs(b, rotations, padded, h, rotation), ratio};
  };
  KILN_ASSIGN_OR_RETURN(
      jacobi::JacobiSweeps sweeps,
      jacobi::RunJacobiSweeps(builder, shape, full, matrix_batch::Identities(builder, padded), n2, tolerance,
                              /*two_sided=*/true, trip));

  // Eigenvalues ascending, the padding (id n) last.
  Op values = matrix_batch::RealPart(builder, diagonal_of(builder, sweeps.matrix, n2));
  const std::vector<int64_t> value_dims = shape.Dims({n2});
  std::vector<int64_t> last_axis = {nb};
  Op padding = builder.BroadcastInDim(
      builder.Eq(sweeps.seat_ids, builder.ConstantR0<int32_t>(static_cast<int32_t>(n))), value_dims,
      last_axis);
  Op key = builder.Select(
      padding, expansions::Filled(builder, real, std::numeric_limits<float>::max(), value_dims), values);
  std::vector<int64_t> key_axes = shape.BatchAxes();
  key_axes.push_back(nb + 1);
  std::vector<Op> sorted_v = jacobi::SortByKey(builder, builder.BroadcastInDim(key, padded_dims, key_axes),
                                               {sweeps.rotations}, nb + 1, false);
  std::vector<Op> sorted_values = jacobi::SortByKey(builder, key, {key}, nb, false);
  if (sorted_v.empty() || sorted_values.empty())
    return expansions::CannotExpand(instruction, "building the sort of the eigenvalues failed");
  Op eigenvalues = jacobi::Columns(builder, sorted_values[0], nb, 0, n);
  Op vectors = jacobi::Columns(builder, jacobi::Columns(builder, sorted_v[0], nb + 1, 0, n), nb, 0, n);
  // info > 0 as LAPACK's "did not converge" when the last sweep left pairs
  // far from diagonal (or the input held NaNs).
  Op info = jacobi::NotConvergedInfo(builder, shape, sweeps.last_sweep_ratio, eps);
  builder.Tuple(std::vector<Op>{mode->second == 'V' ? vectors : a, eigenvalues, info});
  return builder.Build();
}

bool MatchesGeneralEigen(const Instruction& instruction) {
  const BuiltinCustomCall* target = matrix_batch::LapackTargetOf(instruction);
  return target != nullptr &&
         (target->routine == LapackRoutine::kGeev || target->routine == LapackRoutine::kGees);
}

StatusOr<std::unique_ptr<Module>> RefuseGeneralEigen(const Instruction& instruction) {
  return expansions::CannotExpand(
      instruction,
      "the eigenvalues and Schur form of a general matrix (?geev, ?gees) run on the host "
      "only, as JAX refuses jnp.linalg.eig and jax.scipy.linalg.schur on GPU: run them "
      "on the cpu backend or the interpreter");
}

}  // namespace kiln
