// The intra-op thread pool of one CPU backend instance, shared by kernels,
// dot and convolution. Work is split into contiguous ranges that the calling
// thread and up to num_threads - 1 pool threads take in turn, so a one-range
// loop never touches the pool and no more threads run than were asked for.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "backends/cpu/eigen_threads.h"

namespace kiln::cpu {

class IntraOpThreadPool {
 public:
  // With `openmp_team` (the default), loops run on the OpenMP runtime's
  // team when the process has one (see onednn::RunOnOpenMpTeam), else on
  // the pool's own threads.
  explicit IntraOpThreadPool(int num_threads, bool openmp_team = true);
  ~IntraOpThreadPool();
  IntraOpThreadPool(const IntraOpThreadPool&) = delete;
  IntraOpThreadPool& operator=(const IntraOpThreadPool&) = delete;

  int num_threads() const { return num_threads_; }
  // For Eigen Tensor expressions (contractions).
  const Eigen::ThreadPoolDevice& device() const { return *device_; }

  // Calls `body(begin, end)` on disjoint ranges covering [0, extent), each at
  // least `grain` long (except the last), and returns when all are done.
  void ParallelFor(int64_t extent, int64_t grain, const std::function<void(int64_t, int64_t)>& body) const;

 private:
  int num_threads_;
  bool openmp_team_;
  std::unique_ptr<Eigen::ThreadPool> pool_;
  std::unique_ptr<Eigen::ThreadPoolDevice> device_;
};

// Threads a backend uses: `requested` when positive, else KILN_NUM_THREADS
// when set to a positive number, else the hardware's cores; never more than
// MaxThreads() (core/resource_limits.h).
int ResolveThreadCount(int requested);

}  // namespace kiln::cpu
