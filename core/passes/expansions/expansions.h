// The expansion functions DeviceOpExpansions() lists (core/passes/
// device_op_expansion.h says what each must return), one file per op family.
#pragma once

#include <memory>

#include "core/ir.h"
#include "core/status.h"

namespace kiln {

// potrf (Cholesky): cholesky.cc.
bool MatchesCholesky(const Instruction& instruction);
StatusOr<std::unique_ptr<Module>> ExpandCholesky(const Instruction& instruction);

// trsm (triangular solve): triangular_solve.cc.
bool MatchesTriangularSolve(const Instruction& instruction);
StatusOr<std::unique_ptr<Module>> ExpandTriangularSolve(const Instruction& instruction);

// getrf (LU with partial pivoting): lu.cc.
bool MatchesLu(const Instruction& instruction);
StatusOr<std::unique_ptr<Module>> ExpandLu(const Instruction& instruction);

// fft (every fft_type, c64 and c128, 1 to 3 dimensions): fft.cc.
bool IsFft(const Instruction& instruction);
StatusOr<std::unique_ptr<Module>> ExpandFft(const Instruction& instruction);

// geqrf (Householder QR), orgqr/ungqr (its Q), gehrd (Hessenberg): qr.cc.
bool MatchesGeqrf(const Instruction& instruction);
StatusOr<std::unique_ptr<Module>> ExpandGeqrf(const Instruction& instruction);
bool MatchesOrgqr(const Instruction& instruction);
StatusOr<std::unique_ptr<Module>> ExpandOrgqr(const Instruction& instruction);
bool MatchesGehrd(const Instruction& instruction);
StatusOr<std::unique_ptr<Module>> ExpandGehrd(const Instruction& instruction);
// sytrd/hetrd (tridiagonal form, uplo 'L'): qr.cc.
bool MatchesSytrd(const Instruction& instruction);
StatusOr<std::unique_ptr<Module>> ExpandSytrd(const Instruction& instruction);

// gesdd/gesvd (singular value decomposition, one-sided Jacobi): svd.cc.
bool MatchesSvd(const Instruction& instruction);
StatusOr<std::unique_ptr<Module>> ExpandSvd(const Instruction& instruction);

// syevd/heevd (Hermitian eigen-decomposition, two-sided Jacobi): eigh.cc.
bool MatchesEigh(const Instruction& instruction);
StatusOr<std::unique_ptr<Module>> ExpandEigh(const Instruction& instruction);
// geev/gees (general eigen, Schur): always refused, saying why (eigh.cc).
bool MatchesGeneralEigen(const Instruction& instruction);
StatusOr<std::unique_ptr<Module>> RefuseGeneralEigen(const Instruction& instruction);

}  // namespace kiln
