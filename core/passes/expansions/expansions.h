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

}  // namespace kiln
