// RunEigenDot for f64 (see eigen_dot.h for why each type has its own file).
#include "backends/cpu/eigen_dot_impl.h"

namespace kiln::cpu {

template void RunEigenDot<double>(const DotGeometry&, const double*, const double*, double*,
                                  const IntraOpThreadPool*);

}  // namespace kiln::cpu
