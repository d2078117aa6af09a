// RunEigenDot for f32 (see eigen_dot.h for why each type has its own file).
#include "backends/cpu/eigen_dot_impl.h"

namespace kiln::cpu {

template void RunEigenDot<float>(const DotGeometry&, const float*, const float*, float*,
                                 const IntraOpThreadPool*);

}  // namespace kiln::cpu
