// RunEigenDot for c64 (see eigen_dot.h for why each type has its own file).
#include "backends/cpu/eigen_dot_impl.h"

namespace kiln::cpu {

template void RunEigenDot<std::complex<float>>(const DotGeometry&, const std::complex<float>*,
                                               const std::complex<float>*, std::complex<float>*,
                                               const IntraOpThreadPool*);

}  // namespace kiln::cpu
