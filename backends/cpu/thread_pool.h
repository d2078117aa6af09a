// The intra-op thread pool of one CPU backend instance, shared by kernels,
// dot and convolution; its threads start on first use. Work is split into contiguous ranges that the calling
// thread and up to num_threads - 1 helper threads claim one at a time, so a
// one-range loop never touches the pool and no more threads run than were
// asked for.
//
// Fair on a busy machine: the caller never waits for a helper that has not
// claimed a range (on a loaded core a woken helper may get no time slice for
// milliseconds; the caller then runs the ranges itself), and an idle helper
// spins only briefly (kSpinBeforeSleeping) before it blocks in the kernel,
// so waiting helpers neither burn the cores other processes need nor use up
// their own share of them. The OpenMP team that oneDNN would otherwise use
// spins for milliseconds after every parallel region (libgomp's default), which
// made a 256^3 matmul take 8 ms instead of 0.45 ms when another process kept
// both cores busy; oneDNN therefore runs single-threaded pieces of its work
// on this pool instead (see onednn_runtime.h).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "backends/cpu/eigen_threads.h"

namespace kiln::cpu {

class IntraOpThreadPool {
 public:
  // How long an idle helper (or a caller waiting for a helper's range) spins
  // before it blocks: long enough to bridge the gaps between the loops of one
  // execution, short enough not to matter to other processes.
  static constexpr std::chrono::microseconds kSpinBeforeSleeping{100};

  explicit IntraOpThreadPool(int num_threads);
  ~IntraOpThreadPool();
  IntraOpThreadPool(const IntraOpThreadPool&) = delete;
  IntraOpThreadPool& operator=(const IntraOpThreadPool&) = delete;

  int num_threads() const { return num_threads_; }
  // For Eigen Tensor expressions (contractions). Eigen's threads start on
  // the first call.
  const Eigen::ThreadPoolDevice& device() const;

  // Calls `body(begin, end)` on disjoint ranges covering [0, extent), each at
  // least `grain` long (except the last), and returns when all are done.
  // Several threads may call it at once.
  void ParallelFor(int64_t extent, int64_t grain, const std::function<void(int64_t, int64_t)>& body) const;

  // Helper threads blocked in the kernel right now, waiting for work.
  int sleeping_helpers() const;

 private:
  class Team;
  Team* team() const;

  // Threads start when first needed, not with the pool: a client that only
  // compiles, or runs programs too small to split, starts none, and creating
  // and destroying clients (a binding's leak loop, a short-lived session)
  // costs no thread start and join each time.
  int num_threads_;
  mutable std::once_flag team_started_;
  mutable std::atomic<Team*> team_{nullptr};  // owned; stays null with one thread
  mutable std::once_flag eigen_started_;
  mutable std::unique_ptr<Eigen::ThreadPool> eigen_pool_;
  mutable std::unique_ptr<Eigen::ThreadPoolDevice> device_;
};

// Threads a backend uses: `requested` when positive, else KILN_NUM_THREADS
// when set to a positive number, else the hardware's cores; never more than
// MaxThreads() (core/resource_limits.h).
int ResolveThreadCount(int requested);

}  // namespace kiln::cpu
