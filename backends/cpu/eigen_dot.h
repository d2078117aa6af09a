// The Eigen path of the dot thunk: one product per batch element, on the
// calling thread or the backend's pool. Each element type is instantiated in
// its own file (eigen_dot_<type>.cc): Eigen's tensor contraction is the most
// expensive template in the build, and four files compile side by side where
// one took minutes alone.
#pragma once

#include <complex>

#include "backends/cpu/dot_thunk.h"

namespace kiln::cpu {

class IntraOpThreadPool;

// out[b] = lhs[b] x rhs[b] for every batch element of `g`; `pool` may be
// null (one thread).
template <typename T>
void RunEigenDot(const DotGeometry& g, const T* lhs, const T* rhs, T* out, const IntraOpThreadPool* pool);

extern template void RunEigenDot<float>(const DotGeometry&, const float*, const float*, float*,
                                        const IntraOpThreadPool*);
extern template void RunEigenDot<double>(const DotGeometry&, const double*, const double*, double*,
                                         const IntraOpThreadPool*);
extern template void RunEigenDot<std::complex<float>>(const DotGeometry&, const std::complex<float>*,
                                                      const std::complex<float>*, std::complex<float>*,
                                                      const IntraOpThreadPool*);
extern template void RunEigenDot<std::complex<double>>(const DotGeometry&, const std::complex<double>*,
                                                       const std::complex<double>*, std::complex<double>*,
                                                       const IntraOpThreadPool*);

}  // namespace kiln::cpu
