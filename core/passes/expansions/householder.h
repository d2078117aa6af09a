// Householder QR as builder loops (qr.cc), for the geqrf and orgqr
// expansions and for what else needs an orthonormal basis (svd.cc completes
// a thin U to a full one with them).
#pragma once

#include <cstdint>
#include <vector>

#include "core/builder.h"
#include "core/passes/expansions/matrix_batch_ops.h"
#include "core/status.h"

namespace kiln {

// ?geqrf of `a` (`shape`'s extents): {the packed factor, the min(rows, cols)
// scales}, LAPACK's reflector convention.
StatusOr<std::vector<Op>> HouseholderFactor(Builder& builder, Op a,
                                            const matrix_batch::MatrixBatchShape& shape);

// ?orgqr: the rows x cols (cols <= rows) Q = H(0) ... H(reflectors - 1) I of
// the reflectors packed below the diagonal of `a` and their scales `taus`.
StatusOr<Op> HouseholderProduct(Builder& builder, Op a, Op taus, const matrix_batch::MatrixBatchShape& shape,
                                int64_t reflectors);

}  // namespace kiln
