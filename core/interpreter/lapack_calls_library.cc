#include "core/interpreter/lapack_calls_library.h"

#include <dlfcn.h>

namespace kiln::interpreter {
namespace {

constexpr const char* kPackageAdvice =
    "install the Debian package liblapacke (it brings liblapack3 and libblas3, the reference LAPACK and "
    "BLAS; libopenblas0-pthread makes OpenBLAS, several times faster, the system's LAPACK)";

template <typename Function>
bool Resolve(void* library, const char* symbol, Function& function) {
  function = reinterpret_cast<Function>(dlsym(library, symbol));
  return function != nullptr;
}

}  // namespace

StatusOr<const LapackLibrary*> LapackLibrary::Load(const std::string& soname) {
  // RTLD_LOCAL: LAPACK's and BLAS's symbols stay out of the process's
  // global namespace (the caller may have its own BLAS). Never closed: the
  // routines are held for the life of the process.
  void* library = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* reason = dlerror();
    return Unavailable("LAPACK cannot be loaded: ", reason != nullptr ? reason : soname, "; ",
                       kPackageAdvice);
  }
  auto* lapack = new LapackLibrary();
  lapack->soname = soname;
  // dlsym on the handle searches the library and then what it depends on,
  // so the BLAS routines are found in the libblas.so.3 LAPACKE brings.
  const char* missing = nullptr;
#define KILN_LAPACKE_RESOLVE(routine)                                                \
  if (missing == nullptr && !Resolve(library, "LAPACKE_" #routine, lapack->routine)) \
    missing = "LAPACKE_" #routine;
  KILN_LAPACKE_ROUTINES(KILN_LAPACKE_RESOLVE)
#undef KILN_LAPACKE_RESOLVE
  if (missing == nullptr && !Resolve(library, "strsm_", lapack->strsm)) missing = "strsm_";
  if (missing == nullptr && !Resolve(library, "dtrsm_", lapack->dtrsm)) missing = "dtrsm_";
  if (missing == nullptr && !Resolve(library, "ctrsm_", lapack->ctrsm)) missing = "ctrsm_";
  if (missing == nullptr && !Resolve(library, "ztrsm_", lapack->ztrsm)) missing = "ztrsm_";
  if (missing != nullptr) {
    delete lapack;
    dlclose(library);
    return Unavailable("LAPACK cannot be used: ", soname, " has no ", missing, " (not LAPACKE 3); ",
                       kPackageAdvice);
  }
  lapack->set_nancheck(0);
  void (*set_num_threads)(int) = nullptr;
  if (Resolve(library, "openblas_set_num_threads", set_num_threads)) {
    set_num_threads(1);
    lapack->held_to_one_thread = true;
    // Holding it to one thread is not enough: OpenBLAS started its worker
    // threads when it was loaded, and they spin (sched_yield) for about a
    // tenth of a second before they sleep, using up to a core beside
    // Kiln's workers. With one thread it never needs them, so they are
    // stopped; OpenBLAS starts them again itself if someone later asks it
    // for more threads.
    int (*shut_down_threads)() = nullptr;
    if (Resolve(library, "blas_thread_shutdown_", shut_down_threads)) (void)shut_down_threads();
  }
  return static_cast<const LapackLibrary*>(lapack);
}

StatusOr<const LapackLibrary*> LapackLibrary::Get() {
  // A function-local static is initialised once, the other threads waiting
  // for it; intentionally never freed (the library is process-wide).
  static const StatusOr<const LapackLibrary*>* loaded =
      new StatusOr<const LapackLibrary*>(Load(kDefaultSoname));
  return *loaded;
}

}  // namespace kiln::interpreter
