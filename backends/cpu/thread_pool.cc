#include "backends/cpu/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>

#include "core/resource_limits.h"

#ifdef KILN_HAVE_DNNL
#include "backends/cpu/onednn_runtime.h"
#endif

namespace kiln::cpu {

IntraOpThreadPool::IntraOpThreadPool(int num_threads, bool openmp_team)
    : num_threads_(std::max(1, num_threads)),
      openmp_team_(openmp_team),
      pool_(std::make_unique<Eigen::ThreadPool>(num_threads_)),
      device_(std::make_unique<Eigen::ThreadPoolDevice>(pool_.get(), num_threads_)) {}

IntraOpThreadPool::~IntraOpThreadPool() = default;

void IntraOpThreadPool::ParallelFor(int64_t extent, int64_t grain,
                                    const std::function<void(int64_t, int64_t)>& body) const {
  if (extent <= 0) return;
  grain = std::max<int64_t>(1, grain);
  // A few ranges per thread balance uneven ranges without much scheduling.
  const int64_t max_ranges = int64_t{num_threads_} * 4;
  const int64_t ranges = std::min(max_ranges, (extent + grain - 1) / grain);
  if (ranges <= 1 || num_threads_ == 1) {
    body(0, extent);
    return;
  }
  const int64_t step = (extent + ranges - 1) / ranges;
  const int64_t count = (extent + step - 1) / step;
  // The caller and at most num_threads - 1 pool threads take ranges from one
  // counter until none are left: never more runnable threads than the
  // intra-op thread count (a third one on two cores made every kernel wait
  // for a time slice), and whoever is free takes the next range.
  std::atomic<int64_t> next{0};
  auto work = [&] {
    for (int64_t r = next.fetch_add(1); r < count; r = next.fetch_add(1)) {
      const int64_t begin = r * step;
      body(begin, std::min(extent, begin + step));
    }
  };
  const auto helpers = static_cast<unsigned>(std::min<int64_t>(num_threads_ - 1, count - 1));
#ifdef KILN_HAVE_DNNL
  using Work = decltype(work);
  auto run = [](void* data) { (*static_cast<Work*>(data))(); };
  if (openmp_team_ && onednn::RunOnOpenMpTeam(static_cast<int>(helpers) + 1, run, &work)) return;
#endif
  Eigen::Barrier barrier(helpers);
  for (unsigned h = 0; h < helpers; ++h) {
    pool_->Schedule([&work, &barrier] {
      work();
      barrier.Notify();
    });
  }
  work();
  barrier.Wait();
}

int ResolveThreadCount(int requested) {
  // Callers check requested counts (CheckThreadCount); an environment variable
  // cannot report an error, so a larger one is lowered to the limit.
  if (requested > 0) return std::min(requested, MaxThreads());
  if (const char* env = std::getenv("KILN_NUM_THREADS")) {
    const long value = std::strtol(env, nullptr, 10);
    if (value > 0) return static_cast<int>(std::min<long>(value, MaxThreads()));
  }
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : static_cast<int>(cores);
}

}  // namespace kiln::cpu
