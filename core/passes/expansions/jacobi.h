// Parallel Jacobi rotations for the SVD and Hermitian eigen expansions
// (svd.cc, eigh.cc): n/2 disjoint pairs of columns (the first half of the
// last axis against the second half) rotated at once, then reseated by a
// round-robin tournament so that n - 1 steps pair every column with every
// other (n even).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/builder.h"
#include "core/passes/expansions/matrix_batch_ops.h"

namespace kiln::jacobi {

// The most sweeps (n - 1 steps each) a Jacobi loop runs.
constexpr int64_t kMaxSweeps = 30;

// A batch shape with other matrix extents.
matrix_batch::MatrixBatchShape Reshaped(const matrix_batch::MatrixBatchShape& shape, int64_t rows,
                                        int64_t cols);

// Elements [start, limit) of `axis`.
Op Columns(Builder& b, Op x, int64_t axis, int64_t start, int64_t limit);

// The tournament's next seating of the 2h entries of `axis`: with halves top
// and bottom, top' = (top0, bottom0, top1 .. top(h-2)), bottom' = (bottom1 ..
// bottom(h-1), top(h-1)); top0 stays.
Op NextSeating(Builder& b, Op x, int64_t axis, int64_t h);

// The rotation of each pair (batch..., h) that makes it orthogonal (one
// sided: alpha, beta the squared norms and gamma the inner product of the two
// columns) or diagonal (two sided: alpha, beta the diagonal entries and gamma
// the entry (top, bottom) of a Hermitian matrix): J = [[c, s phase], [-s
// conj(phase), c]], c and s real (held as `type`), |phase| = 1; the smaller
// root t of t^2 + 2 zeta t - 1 = 0, zeta = (beta - alpha) / (2 |gamma|)
// (Rutishauser's rotation); c = 1, s = 0 where gamma is 0.
struct PairRotation {
  Op c, s, phase;
};
PairRotation RotationFor(Builder& b, Op alpha, Op beta, Op gamma, ElementType type,
                         std::span<const int64_t> pair_dims);

// [top, bottom] J for each pair of columns of `x` (`shape`'s extents, 2h
// columns): top' = c top - s conj(phase) bottom, bottom' = s phase top + c
// bottom; with `rows`, J^H [top; bottom] for each pair of rows (2h rows).
Op RotatePairs(Builder& b, Op x, const matrix_batch::MatrixBatchShape& shape, int64_t h,
               const PairRotation& r, bool rows = false);

// What one trip of a cyclic Jacobi loop computes from the matrix being
// rotated and the rotations accumulated so far: both after this trip's
// rotations (not yet reseated), and how far from converged each rotated
// pair was (batch..., h; 0 for a pair that does not count).
struct JacobiTrip {
  Op matrix;
  Op rotations;
  Op ratio;
};
// The loop's final state: the matrix and the rotations, which original
// column sits in each seat (s32[seats]), and the largest ratio of the last
// finished sweep.
struct JacobiSweeps {
  Op matrix;
  Op rotations;
  Op seat_ids;
  Op last_sweep_ratio;
};
// Runs `trip` as the body of one while loop, seats - 1 trips per sweep (a
// tournament over `seats` columns, `seats` even), reseating the columns
// (axis `matrix_axes` of the matrix: the last, or the last two for a two-
// sided rotation) and the rotations' columns after each trip, until a
// sweep's largest ratio is at most `tolerance` or kMaxSweeps sweeps ran.
StatusOr<JacobiSweeps> RunJacobiSweeps(
    Builder& builder, const matrix_batch::MatrixBatchShape& shape, Op matrix, Op rotations, int64_t seats,
    double tolerance, bool two_sided,
    const std::function<JacobiTrip(Builder&, Op matrix, Op rotations)>& trip);
// LAPACK's info for a Jacobi loop, per matrix (batch...): 1 ("did not
// converge") where the last sweep left a ratio above sqrt(eps) or NaN (the
// input held NaNs), else 0.
Op NotConvergedInfo(Builder& builder, const matrix_batch::MatrixBatchShape& shape, Op last_sweep_ratio,
                    double eps);

// `key` and `payloads` (each of `key`'s shape) sorted along `axis` by key,
// stably, descending or ascending: the payloads' entries follow their keys.
// Returns the sorted payloads, or nothing when the comparator fails to build.
std::vector<Op> SortByKey(Builder& b, Op key, std::vector<Op> payloads, int64_t axis, bool descending);

}  // namespace kiln::jacobi
