// The singular value decomposition (?gesdd, ?gesvd) as one-sided Jacobi
// (Hestenes) sweeps of ordinary HLO: the columns of W (A, or A^H when A is
// wide) are rotated in pairs until every pair is orthogonal, V collecting the
// rotations; then the singular values are the column norms, U the columns
// scaled to unit length. Each loop trip rotates n/2 disjoint pairs at once
// (a round-robin tournament: the columns move one seat after every trip, so
// n - 1 trips pair every column with every other), so a trip is a few
// kernels over the whole batch. Singular values come sorted descending as
// LAPACK's; singular vectors are unique only up to a phase per pair (and a
// rotation within a repeated value), so they may differ from LAPACK's in
// sign while U S V^H, U^H U and V^H V agree. U's columns of a zero singular
// value are zero (LAPACK completes them to an orthonormal basis); the extra
// columns of a full U (or rows of V^T) of a non-square matrix come from the
// Householder QR of the thin one.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/passes/expansions/expansions.h"
#include "core/passes/expansions/householder.h"
#include "core/passes/expansions/jacobi.h"
#include "core/passes/expansions/matrix_batch_ops.h"

namespace kiln {
namespace {

bool IsSingularValueCall(const Instruction& instruction) {
  const BuiltinCustomCall* target = matrix_batch::LapackTargetOf(instruction);
  return target != nullptr &&
         (target->routine == LapackRoutine::kGesdd || target->routine == LapackRoutine::kGesvd);
}

}  // namespace

bool MatchesSvd(const Instruction& instruction) { return IsSingularValueCall(instruction); }

StatusOr<std::unique_ptr<Module>> ExpandSvd(const Instruction& instruction) {
  KILN_ASSIGN_OR_RETURN(matrix_batch::MatrixBatchShape shape, matrix_batch::MatrixOperand(instruction, 0));
  if (!instruction.shape.IsTuple() || instruction.shape.tuple_shapes().size() != 5)
    return expansions::CannotExpand(instruction, "its result is not a tuple of 5");
  KILN_ASSIGN_OR_RETURN(auto attributes, ParseFfiIntegerAttributes(instruction.attrs.backend_config));
  auto mode_attribute = attributes.find("mode");
  const int64_t mode = mode_attribute == attributes.end() ? 0 : mode_attribute->second;
  if (mode != 'A' && mode != 'S' && mode != 'N')
    return expansions::CannotExpand(instruction, "its attribute mode is not 'A', 'S' or 'N'");
  const int64_t m = shape.rows;
  const int64_t n = shape.cols;
  const int64_t k = std::min(m, n);
  const Shape& u_shape = instruction.shape.tuple_shapes(2);
  const Shape& vt_shape = instruction.shape.tuple_shapes(3);
  if (!u_shape.IsArray() || !vt_shape.IsArray() || u_shape.rank() != shape.batch_rank() + 2 ||
      vt_shape.rank() != shape.batch_rank() + 2)
    return expansions::CannotExpand(instruction, "its U and V^T results are not batches of matrices");
  const int64_t want_u_cols = mode == 'A' ? m : k;
  const int64_t want_vt_rows = mode == 'A' ? n : k;
  if (mode != 'N' && (u_shape.dimensions(u_shape.rank() - 1) != want_u_cols ||
                      vt_shape.dimensions(vt_shape.rank() - 2) != want_vt_rows)) {
    return expansions::CannotExpand(instruction, "its U and V^T results do not have the shapes mode " +
                                                     std::string(1, static_cast<char>(mode)) + " gives");
  }
  if (k == 0) return expansions::CannotExpand(instruction, "the matrices are empty");

  Builder builder("svd");
  const int64_t nb = shape.batch_rank();
  const ElementType real = shape.real_type();
  Op a = builder.Parameter(0, instruction.operands[0]->shape, "a");
  const bool wide = m < n;
  const int64_t p = std::max(m, n);
  const int64_t q = k;
  const int64_t q2 = q + (q % 2 == 0 ? 0 : 1);
  const int64_t h = q2 / 2;
  const matrix_batch::MatrixBatchShape w_shape = jacobi::Reshaped(shape, p, q2);
  const matrix_batch::MatrixBatchShape v_shape = jacobi::Reshaped(shape, q2, q2);
  Op w = wide ? matrix_batch::Adjoint(builder, a, shape) : a;
  if (q2 != q) {
    std::vector<int64_t> zero_dims = shape.Dims({p, 1});
    w = builder.ConcatInDim(std::vector<Op>{w, expansions::Filled(builder, shape.type, 0.0, zero_dims)},
                            nb + 1);
  }
  const double eps = real == ElementType::kF32 ? std::numeric_limits<float>::epsilon()
                                               : std::numeric_limits<double>::epsilon();
  const double tolerance = static_cast<double>(p) * eps;

  auto trip = [&](Builder& b, Op columns, Op rotations) {
    const std::vector<int64_t> pair_dims = shape.Dims({h});
    Op top = jacobi::Columns(b, columns, nb + 1, 0, h);
    Op bottom = jacobi::Columns(b, columns, nb + 1, h, q2);
    Op alpha = matrix_batch::SumOver(b, matrix_batch::AbsSquared(b, top), nb);
    Op beta = matrix_batch::SumOver(b, matrix_batch::AbsSquared(b, bottom), nb);
    Op gamma = matrix_batch::SumOver(b, b.Mul(matrix_batch::Conjugate(b, top), bottom), nb);
    jacobi::PairRotation rotation = jacobi::RotationFor(b, alpha, beta, gamma, shape.type, pair_dims);
    Op g = b.Abs(gamma);
    Op zero = expansions::Filled(b, real, 0.0, pair_dims);
    Op one = expansions::Filled(b, real, 1.0, pair_dims);
    // How far from orthogonal the pairs were: |gamma| / sqrt(alpha beta).
    // A column at rounding level against the whole matrix (a zero singular
    // value) has no direction to be orthogonal in: its pairs do not count.
    Op total =
        b.BroadcastInDim(matrix_batch::SumOver(b, b.Add(alpha, beta), nb), pair_dims, shape.BatchAxes());
    Op negligible = b.Le(b.Min(alpha, beta),
                         b.Mul(total, expansions::ScalarOf(b, real, eps * eps * static_cast<double>(p))));
    Op norms = b.Sqrt(b.Mul(alpha, beta));
    Op counted = b.And(b.Not(negligible), b.Gt(norms, zero));
    Op ratio = b.Select(counted, b.Div(g, b.Select(counted, norms, one)), zero);
    return jacobi::JacobiTrip{jacobi::RotatePairs(b, columns, w_shape, h, rotation),
                              jacobi::RotatePairs(b, rotations, v_shape, h, rotation), ratio};
  };
  KILN_ASSIGN_OR_RETURN(jacobi::JacobiSweeps sweeps,
                        jacobi::RunJacobiSweeps(builder, shape, w, matrix_batch::Identities(builder, v_shape),
                                                q2, tolerance, /*two_sided=*/false, trip));

  // Singular values: the column norms, the padding column (id q) last.
  Op norms =
      builder.Sqrt(matrix_batch::SumOver(builder, matrix_batch::AbsSquared(builder, sweeps.matrix), nb));
  const std::vector<int64_t> value_dims = shape.Dims({q2});
  std::vector<int64_t> last_axis = {nb};
  Op padding = builder.BroadcastInDim(
      builder.Eq(sweeps.seat_ids, builder.ConstantR0<int32_t>(static_cast<int32_t>(q))), value_dims,
      last_axis);
  Op key = builder.Select(padding, expansions::Filled(builder, real, -1.0, value_dims), norms);
  std::vector<int64_t> key_axes = shape.BatchAxes();
  key_axes.push_back(nb + 1);
  Op w_key = builder.BroadcastInDim(key, w_shape.Dims({p, q2}), key_axes);
  Op v_key = builder.BroadcastInDim(key, v_shape.Dims({q2, q2}), key_axes);
  std::vector<Op> sorted_w = jacobi::SortByKey(builder, w_key, {sweeps.matrix}, nb + 1, /*descending=*/true);
  std::vector<Op> sorted_v =
      jacobi::SortByKey(builder, v_key, {sweeps.rotations}, nb + 1, /*descending=*/true);
  std::vector<Op> sorted_values = jacobi::SortByKey(builder, key, {key}, nb, /*descending=*/true);
  if (sorted_w.empty() || sorted_v.empty() || sorted_values.empty())
    return expansions::CannotExpand(instruction, "building the sort of the singular values failed");
  Op values = jacobi::Columns(builder, sorted_values[0], nb, 0, q);
  Op w_columns = jacobi::Columns(builder, sorted_w[0], nb + 1, 0, q);
  Op v_columns = builder.SliceInDim(jacobi::Columns(builder, sorted_v[0], nb + 1, 0, q), 0, q, 1, nb);
  const std::vector<int64_t> u_dims = shape.Dims({p, q});
  std::vector<int64_t> scale_axes = shape.BatchAxes();
  scale_axes.push_back(nb + 1);
  Op divisor = builder.BroadcastInDim(values, u_dims, scale_axes);
  Op real_zeros = expansions::Filled(builder, real, 0.0, u_dims);
  Op nonzero = builder.Gt(divisor, real_zeros);
  Op safe = builder.Select(nonzero, divisor, expansions::Filled(builder, real, 1.0, u_dims));
  Op u_columns =
      builder.Select(nonzero, builder.Div(w_columns, matrix_batch::RealAs(builder, safe, shape.type)),
                     expansions::Filled(builder, shape.type, 0.0, u_dims));
  // Mode 'A' of a non-square matrix: the p - q columns that complete U's to
  // an orthonormal basis, from the Householder QR of U (the last columns of
  // its full Q are orthogonal to U's).
  if (mode == 'A' && p > q) {
    const matrix_batch::MatrixBatchShape thin = jacobi::Reshaped(shape, p, q);
    KILN_ASSIGN_OR_RETURN(std::vector<Op> qr, HouseholderFactor(builder, u_columns, thin));
    Op square = builder.ConcatInDim(
        std::vector<Op>{qr[0], expansions::Filled(builder, shape.type, 0.0, shape.Dims({p, p - q}))}, nb + 1);
    KILN_ASSIGN_OR_RETURN(Op full_q,
                          HouseholderProduct(builder, square, qr[1], jacobi::Reshaped(shape, p, p), q));
    u_columns = builder.ConcatInDim(
        std::vector<Op>{u_columns, jacobi::Columns(builder, full_q, nb + 1, q, p)}, nb + 1);
  }
  const int64_t u_count = mode == 'A' ? p : q;
  Op u;
  Op vt;
  if (mode == 'N') {
    u = expansions::Filled(builder, shape.type, 0.0, u_shape.dimensions());
    vt = expansions::Filled(builder, shape.type, 0.0, vt_shape.dimensions());
  } else if (!wide) {
    u = u_columns;
    vt = matrix_batch::Adjoint(builder, v_columns, jacobi::Reshaped(shape, q, q));
  } else {
    u = v_columns;
    vt = matrix_batch::Adjoint(builder, u_columns, jacobi::Reshaped(shape, p, u_count));
  }
  // info > 0 as LAPACK's "did not converge" when the last sweep left pairs
  // far from orthogonal (or the input held NaNs).
  Op info = jacobi::NotConvergedInfo(builder, shape, sweeps.last_sweep_ratio, eps);
  builder.Tuple(std::vector<Op>{a, values, u, vt, info});
  return builder.Build();
}

}  // namespace kiln
