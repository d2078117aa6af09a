// Custom-call targets Kiln runs itself, with no kiln_register_custom_call:
// the LAPACK calls JAX emits on CPU for jnp.linalg and jax.scipy.linalg
// ("lapack_spotrf_ffi", ...). This is the table of which targets are built
// in; the interpreter runs them (core/interpreter/lapack_calls.cc).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/element_type.h"
#include "core/status.h"

namespace kiln {

// The LAPACK (or BLAS) routine family a built-in target runs.
enum class LapackRoutine {
  kPotrf,  // Cholesky factor
  kGetrf,  // LU factor with partial pivoting
  kGeqrf,  // QR factor as Householder reflectors
  kOrgqr,  // Q from Householder reflectors (ungqr for complex)
  kSyevd,  // eigen-decomposition of a symmetric matrix (heevd for complex)
  kGesdd,  // singular value decomposition, divide and conquer
  kGesvd,  // singular value decomposition, QR iteration
  kTrsm,   // triangular solve with many right-hand sides (BLAS)
  kGeev,   // eigenvalues and left/right eigenvectors of a general matrix
  kGees,   // Schur form and Schur vectors
  kGehrd,  // reduction to upper Hessenberg form as Householder reflectors
  kSytrd,  // reduction of a Hermitian matrix to tridiagonal form (hetrd for complex)
};

struct BuiltinCustomCall {
  std::string target;  // e.g. "lapack_spotrf_ffi"
  LapackRoutine routine;
  ElementType type;  // f32, f64, c64 or c128: the matrix element type
  std::string_view does;
};

// Every built-in target, one per routine and element type.
const std::vector<BuiltinCustomCall>& BuiltinCustomCalls();
// The built-in target named `target`, or nullptr.
const BuiltinCustomCall* FindBuiltinCustomCall(std::string_view target);

// Typed-FFI attributes of a custom call, parsed from its backend_config text
// as JAX prints it: "{mode = 86 : ui8, uplo = 76 : ui8}" (integers only, the
// only kind the built-in targets take). INVALID_ARGUMENT for other text.
StatusOr<std::map<std::string, int64_t>> ParseFfiIntegerAttributes(std::string_view backend_config);

}  // namespace kiln
