// The table of device op expansions: one row per op family, in the order
// they are tried. A row's `matches` must be cheap; `expand` may refuse an
// instance it cannot handle with a status naming why.
#include "core/passes/device_op_expansion.h"
#include "core/passes/expansions/expansions.h"

namespace kiln {

const std::vector<DeviceOpExpansion>& DeviceOpExpansions() {
  static const std::vector<DeviceOpExpansion> table = {
      {"potrf (Cholesky)", MatchesCholesky, ExpandCholesky},
      {"trsm (triangular solve)", MatchesTriangularSolve, ExpandTriangularSolve},
      {"getrf (LU with partial pivoting)", MatchesLu, ExpandLu},
      {"fft (FFT, IFFT, RFFT, IRFFT)", IsFft, ExpandFft},
      {"geqrf (Householder QR)", MatchesGeqrf, ExpandGeqrf},
      {"orgqr/ungqr (Q of a QR)", MatchesOrgqr, ExpandOrgqr},
      {"gehrd (Hessenberg reduction)", MatchesGehrd, ExpandGehrd},
      {"sytrd/hetrd (tridiagonal reduction)", MatchesSytrd, ExpandSytrd},
      {"gesdd/gesvd (singular value decomposition)", MatchesSvd, ExpandSvd},
      {"syevd/heevd (Hermitian eigen-decomposition)", MatchesEigh, ExpandEigh},
      {"geev/gees (host only, as in JAX)", MatchesGeneralEigen, RefuseGeneralEigen},
  };
  return table;
}

}  // namespace kiln
