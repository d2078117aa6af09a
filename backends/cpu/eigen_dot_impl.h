// The body of RunEigenDot (eigen_dot.h), included only by the files that
// instantiate it, one element type each.
#pragma once

#include <algorithm>

#include "backends/cpu/eigen_dot.h"
#include "backends/cpu/eigen_threads.h"
#include "backends/cpu/thread_pool.h"

namespace kiln::cpu {

// Below this many multiply-adds per batch element, parallelise over the
// batch instead of inside each product.
inline constexpr int64_t kSmallEigenProduct = 64 * 64 * 64;

template <typename T>
void RunEigenDot(const DotGeometry& g, const T* lhs, const T* rhs, T* out, const IntraOpThreadPool* pool) {
  using ConstMap = Eigen::TensorMap<Eigen::Tensor<const T, 2, Eigen::RowMajor>>;
  using Map = Eigen::TensorMap<Eigen::Tensor<T, 2, Eigen::RowMajor>>;
  const Eigen::array<Eigen::IndexPair<Eigen::Index>, 1> contract = {
      Eigen::IndexPair<Eigen::Index>(g.lhs_contracting_first ? 0 : 1, g.rhs_contracting_last ? 1 : 0)};
  const int64_t lhs_size = g.m * g.k, rhs_size = g.k * g.n, out_size = g.m * g.n;
  auto one = [&](int64_t b, auto& device) {
    ConstMap a(lhs + b * lhs_size, g.lhs_contracting_first ? g.k : g.m, g.lhs_contracting_first ? g.m : g.k);
    ConstMap c(rhs + b * rhs_size, g.rhs_contracting_last ? g.n : g.k, g.rhs_contracting_last ? g.k : g.n);
    Map result(out + b * out_size, g.m, g.n);
    result.device(device) = a.contract(c, contract);
  };
  const bool small = g.m * g.n * g.k < kSmallEigenProduct;
  if (pool == nullptr || (small && g.batch == 1)) {
    Eigen::DefaultDevice device;
    for (int64_t b = 0; b < g.batch; ++b) one(b, device);
  } else if (small) {
    const int64_t grain = std::max<int64_t>(1, kSmallEigenProduct / std::max<int64_t>(1, g.m * g.n * g.k));
    pool->ParallelFor(g.batch, grain, [&](int64_t begin, int64_t end) {
      Eigen::DefaultDevice device;
      for (int64_t b = begin; b < end; ++b) one(b, device);
    });
  } else {
    for (int64_t b = 0; b < g.batch; ++b) one(b, pool->device());
  }
}

}  // namespace kiln::cpu
