// LAPACKE, LAPACK and BLAS for the built-in LAPACK custom calls, loaded with
// dlopen on the first such call and never linked into libkiln.so.
//
// Why not linked: Debian's liblapack.so.3 and libblas.so.3 are alternatives,
// and when the chosen one is OpenBLAS, loading it starts a pool of threads
// that spin (sched_yield) while idle. Linked, every process that loads Kiln
// would pay for those threads whether or not it ever factors a matrix, and
// they would compete with Kiln's own workers on a busy machine. Loaded
// lazily, only a program that runs jnp.linalg does.
//
// The library is "liblapacke.so.3" (Debian package liblapacke), found by the
// dynamic loader's usual search; it brings liblapack.so.3 and libblas.so.3
// (packages liblapack3 and libblas3, or an alternative such as OpenBLAS),
// where the BLAS ?trsm_ routines are found.
#pragma once

#include <complex>
#include <string>

#include "core/status.h"

// LAPACKE's complex types are the C++ ones here (its documented switch).
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>

namespace kiln::interpreter {

// BLAS ?trsm (Fortran ABI; the trailing lengths are the character arguments').
template <typename T>
using TrsmFunction = void (*)(const char* side, const char* uplo, const char* transa, const char* diag,
                              const int* m, const int* n, const T* alpha, const T* a, const int* lda, T* b,
                              const int* ldb, size_t, size_t, size_t, size_t);

// The LAPACKE routines Kiln calls, one X(routine) each: field `routine`,
// symbol "LAPACKE_routine", the type LAPACKE declares.
// clang-format off
#define KILN_LAPACKE_ROUTINES(X)                                                                          \
  X(spotrf) X(dpotrf) X(cpotrf) X(zpotrf) X(sgetrf) X(dgetrf) X(cgetrf) X(zgetrf)                        \
  X(sgeqrf) X(dgeqrf) X(cgeqrf) X(zgeqrf) X(sorgqr) X(dorgqr) X(cungqr) X(zungqr)                        \
  X(ssyevd) X(dsyevd) X(cheevd) X(zheevd) X(sgesdd) X(dgesdd) X(cgesdd) X(zgesdd)                        \
  X(sgesvd) X(dgesvd) X(cgesvd) X(zgesvd) X(sgeev) X(dgeev) X(cgeev) X(zgeev)                            \
  X(sgees) X(dgees) X(cgees) X(zgees) X(sgehrd) X(dgehrd) X(cgehrd) X(zgehrd)                            \
  X(ssytrd) X(dsytrd) X(chetrd) X(zhetrd) X(set_nancheck)
// clang-format on

class LapackLibrary {
 public:
  // The soname loaded when nothing else is asked for.
  static constexpr const char* kDefaultSoname = "liblapacke.so.3";

  // The process-wide library, loaded from kDefaultSoname on the first call
  // (thread-safe; later calls wait for the first and share its answer, the
  // same error included). Never unloaded.
  static StatusOr<const LapackLibrary*> Get();

  // Loads `soname` and resolves every routine, for Get and for tests.
  // UNAVAILABLE naming `soname`, the loader's reason and the Debian package
  // to install when it cannot be loaded; UNAVAILABLE naming the first
  // missing symbol when it is not LAPACKE. On success the library is set up
  // as Kiln needs it: LAPACKE's NaN check off (JAX calls LAPACK directly,
  // which factors a matrix holding NaN into NaNs instead of refusing it),
  // and an OpenBLAS held to one thread (see held_to_one_thread).
  static StatusOr<const LapackLibrary*> Load(const std::string& soname);

#define KILN_LAPACKE_FIELD(routine) decltype(&LAPACKE_##routine) routine = nullptr;
  KILN_LAPACKE_ROUTINES(KILN_LAPACKE_FIELD)
#undef KILN_LAPACKE_FIELD
  TrsmFunction<float> strsm = nullptr;
  TrsmFunction<double> dtrsm = nullptr;
  TrsmFunction<std::complex<float>> ctrsm = nullptr;
  TrsmFunction<std::complex<double>> ztrsm = nullptr;

  // The soname that was loaded.
  std::string soname;
  // True when the BLAS is OpenBLAS (it exports openblas_set_num_threads),
  // which was then told to use one thread and whose worker threads were
  // stopped: Kiln runs independent matrices
  // of a batch on its own workers, and OpenBLAS threads on top of those
  // would oversubscribe the cores and spin while idle.
  bool held_to_one_thread = false;
};

}  // namespace kiln::interpreter
