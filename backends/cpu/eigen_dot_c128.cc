// RunEigenDot for c128 (see eigen_dot.h for why each type has its own file).
#include "backends/cpu/eigen_dot_impl.h"

namespace kiln::cpu {

template void RunEigenDot<std::complex<double>>(const DotGeometry&, const std::complex<double>*,
                                                const std::complex<double>*, std::complex<double>*,
                                                const IntraOpThreadPool*);

}  // namespace kiln::cpu
